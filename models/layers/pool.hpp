#pragma once
// 2x2 max pooling, stride 2, over NCHW buffers. Odd trailing rows/columns are dropped (floor), as
// PyTorch's MaxPool2d(2) does.
#include <cstddef>
#include <cstdint>

namespace troupe::models::layers {

// y[n,c,h/2,w/2]; arg records, per output, the input index (within its sample) that won, so
// backward is a scatter with no comparisons.
void maxpool2_forward(const float* x, float* y, std::int32_t* arg, std::size_t n, std::size_t c,
                      std::size_t h, std::size_t w);
// Overwrites dx[n,c,h,w].
void maxpool2_backward(const float* dy, const std::int32_t* arg, float* dx, std::size_t n,
                       std::size_t c, std::size_t h, std::size_t w);

}  // namespace troupe::models::layers
