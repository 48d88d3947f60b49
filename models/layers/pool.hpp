#pragma once
// 2x2 max pooling, stride 2, over NCHW buffers. Odd trailing rows/columns are dropped (floor), as
// PyTorch's MaxPool2d(2) does.
#include <cstddef>
#include <cstdint>

namespace troupe::models::layers {

// y[n,c,h/2,w/2]; win records, per output, which of its window's inputs won (0 to 3 in row-major
// order, the first of equal maxima), so backward needs no compares. Not an input index: backward
// writes each window whole, winner or zero, which spares it a zeroing pass over dx and a
// scatter. 32 bits wide, like the floats beside it, so that both loops vectorize.
void maxpool2_forward(const float* x, float* y, std::int32_t* win, std::size_t n, std::size_t c,
                      std::size_t h, std::size_t w);
// Overwrites dx[n,c,h,w].
void maxpool2_backward(const std::int32_t* win, const float* dy, float* dx, std::size_t n,
                       std::size_t c, std::size_t h, std::size_t w);

}  // namespace troupe::models::layers
