#pragma once
// Weight initialisation drawn from troupe::rng, so it is the same on every platform.
#include <cmath>
#include <cstddef>

#include "core/rng.hpp"

namespace troupe::models::layers {

// He/Kaiming uniform: U(-bound, bound) with bound = gain * sqrt(3 / fan_in), which gives variance
// gain^2 / fan_in. gain = sqrt(2) keeps activations' scale through a ReLU (He et al. 2015); use 1
// for a layer with no ReLU after it (the logits).
inline void kaiming_uniform(float* w, std::size_t count, std::size_t fan_in, double gain, rng& r) {
  const float bound = static_cast<float>(gain * std::sqrt(3.0 / static_cast<double>(fan_in)));
  for (std::size_t i = 0; i < count; ++i) w[i] = r.uniform_float(-bound, bound);
}

}  // namespace troupe::models::layers
