#include "models/layers/activation.hpp"

#include <algorithm>

namespace troupe::models::layers {

void relu_forward(const float* x, float* y, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) y[i] = std::max(x[i], 0.0f);
}

void relu_backward(const float* y, const float* dy, float* dx, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

}  // namespace troupe::models::layers
