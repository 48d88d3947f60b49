#include "data/split.hpp"

#include <cmath>
#include <string>

#include "core/apportion.hpp"
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
  std::size_t positive = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (!std::isfinite(weights[i]) || weights[i] < 0) {
      throw input_error("split_weighted: weight " + std::to_string(i) + " = " +
                        std::to_string(weights[i]) + " is negative or not finite");
    }
    positive += weights[i] > 0;
  }
  if (positive == 0) throw input_error("split_weighted: all weights are zero");
  return apportion(batch, weights, min_one);
}

std::vector<std::int64_t> split_blocks(std::int64_t batch, std::int64_t block,
                                       const std::vector<double>& weights, bool min_one) {
  if (block <= 0 || batch < 0) return split_weighted(batch, weights, min_one);
  const std::int64_t blocks = (batch + block - 1) / block;
  auto out = split_weighted(blocks, weights, min_one);
  // The slice that holds the last block (the last non-empty one) gives back its missing samples.
  for (std::size_t i = out.size(); i-- > 0;) {
    if (out[i] == 0) continue;
    out[i] = out[i] * block - (blocks * block - batch);
    for (std::size_t j = 0; j < i; ++j) out[j] *= block;
    break;
  }
  return out;
}

}  // namespace troupe::data
