#include "core/apportion.hpp"

#include <cmath>

namespace troupe {

std::vector<std::int64_t> apportion(std::int64_t total, const std::vector<double>& weights,
                                    bool min_one) {
  const std::size_t w = weights.size();
  long double sum = 0;
  std::size_t positive = 0;
  for (double x : weights) {
    sum += x;
    positive += x > 0;
  }
  std::vector<long double> quota(w);
  std::vector<std::int64_t> out(w);
  std::int64_t left = total;
  for (std::size_t i = 0; i < w; ++i) {
    quota[i] = static_cast<long double>(total) * weights[i] / sum;
    out[i] = static_cast<std::int64_t>(std::floor(quota[i]));
    left -= out[i];
  }
  // Rounding of the quotas can leave the floors a unit over or under the total; these loops
  // settle the difference in either direction so the sum is exact whatever the float error.
  const auto frac = [&](std::size_t i) { return quota[i] - static_cast<long double>(out[i]); };
  while (left > 0) {
    std::size_t best = w;
    for (std::size_t i = 0; i < w; ++i)
      if (weights[i] > 0 && (best == w || frac(i) > frac(best))) best = i;
    ++out[best];
    --left;
  }
  while (left < 0) {
    std::size_t best = w;
    for (std::size_t i = 0; i < w; ++i)
      if (out[i] > 0 && (best == w || frac(i) < frac(best))) best = i;
    --out[best];
    ++left;
  }
  if (min_one && static_cast<std::size_t>(total) >= positive) {
    for (std::size_t i = 0; i < w; ++i) {
      if (weights[i] <= 0 || out[i] > 0) continue;
      std::size_t donor = w;
      for (std::size_t j = 0; j < w; ++j)
        if (out[j] > 1 && (donor == w || frac(j) < frac(donor))) donor = j;
      --out[donor];
      out[i] = 1;
    }
  }
  return out;
}

}  // namespace troupe
