#pragma once
// Element-wise ReLU. The dense and conv layers fuse it into their bias pass; this standalone form
// is for architectures that need it elsewhere (and is the reference the fused paths are checked
// against).
#include <cstddef>

namespace troupe::models::layers {

void relu_forward(const float* x, float* y, std::size_t count);
// dx = dy where y > 0, else 0. dx may alias dy.
void relu_backward(const float* y, const float* dy, float* dx, std::size_t count);

}  // namespace troupe::models::layers
