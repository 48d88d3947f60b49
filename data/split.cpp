#include "data/split.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"

namespace troupe::data {

std::vector<std::int64_t> split_even(std::int64_t batch, std::int64_t workers) {
  if (batch < 0) throw input_error("split_even: batch " + std::to_string(batch) + " is negative");
  if (workers <= 0) {
    throw input_error("split_even: need at least one worker, got " + std::to_string(workers));
  }
  std::vector<std::int64_t> out(static_cast<std::size_t>(workers), batch / workers);
  for (std::int64_t i = 0; i < batch % workers; ++i) ++out[static_cast<std::size_t>(i)];
  return out;
}

std::vector<std::int64_t> split_weighted(std::int64_t batch, const std::vector<double>& weights,
                                         bool min_one) {
  if (batch < 0) {
    throw input_error("split_weighted: batch " + std::to_string(batch) + " is negative");
  }
  if (weights.empty()) throw input_error("split_weighted: no workers (empty weight list)");
  long double total = 0;
  std::size_t positive = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (!std::isfinite(weights[i]) || weights[i] < 0) {
      throw input_error("split_weighted: weight " + std::to_string(i) + " = " +
                        std::to_string(weights[i]) + " is negative or not finite");
    }
    total += weights[i];
    positive += weights[i] > 0;
  }
  if (positive == 0) throw input_error("split_weighted: all weights are zero");

  const std::size_t w = weights.size();
  std::vector<long double> quota(w);
  std::vector<std::int64_t> out(w);
  std::int64_t left = batch;
  for (std::size_t i = 0; i < w; ++i) {
    quota[i] = static_cast<long double>(batch) * weights[i] / total;
    out[i] = static_cast<std::int64_t>(std::floor(quota[i]));
    left -= out[i];
  }
  // Rounding of the quotas can leave the floors a unit over or under B; these loops settle the
  // difference in either direction so the sum is exact whatever the float error.
  const auto frac = [&](std::size_t i) { return quota[i] - static_cast<long double>(out[i]); };
  while (left > 0) {
    std::size_t best = w;
    for (std::size_t i = 0; i < w; ++i) {
      if (weights[i] > 0 && (best == w || frac(i) > frac(best))) best = i;
    }
    ++out[best];
    --left;
  }
  while (left < 0) {
    std::size_t best = w;
    for (std::size_t i = 0; i < w; ++i) {
      if (out[i] > 0 && (best == w || frac(i) < frac(best))) best = i;
    }
    --out[best];
    ++left;
  }
  if (min_one && static_cast<std::size_t>(batch) >= positive) {
    for (std::size_t i = 0; i < w; ++i) {
      if (weights[i] <= 0 || out[i] > 0) continue;
      std::size_t donor = w;
      for (std::size_t j = 0; j < w; ++j) {
        if (out[j] > 1 && (donor == w || -frac(j) > -frac(donor))) donor = j;
      }
      --out[donor];
      out[i] = 1;
    }
  }
  return out;
}

}  // namespace troupe::data
