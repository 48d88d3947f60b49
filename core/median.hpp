#pragma once
// The median of a sample: the middle value, or the mean of the two middle ones; 0 when empty.
// Benchmarks quote medians of repeated runs, and policies use it where one noisy value must not
// steer a decision.
#include <algorithm>
#include <vector>

namespace troupe {

inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace troupe
