#pragma once
// For the cuda backend's tests: how far a gradient or a parameter vector is from the CPU's.
#include <cmath>
#include <vector>

namespace troupe::devices::gpu::testing {

// |a - b| / |b| in double (0 when both are zero).
inline double relative_l2(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0.0, n = 0.0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    d += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    n += static_cast<double>(b[i]) * b[i];
  }
  return n > 0 ? std::sqrt(d / n) : std::sqrt(d);
}

}  // namespace troupe::devices::gpu::testing
