#pragma once
// 2-D convolution, stride 1, 'same' padding (k/2) for an odd kernel k, over NCHW buffers, via
// im2col + GEMM one sample at a time: the per-sample column buffer stays cache-sized and the
// output lands directly in NCHW, so no transpose is needed. Weights are [cout, c, k, k]
// (PyTorch's layout), bias [cout].
#include <cstddef>
#include <vector>

#include "models/layers/gemm_shape.hpp"

namespace troupe::models::layers {

struct conv_shape {
  std::size_t c = 1, h = 1, w = 1;  // input channels and spatial size
  std::size_t cout = 1;
  std::size_t k = 3;  // odd

  std::size_t in_size() const { return c * h * w; }
  std::size_t out_size() const { return cout * h * w; }
  std::size_t col_rows() const { return c * k * k; }
  // Floats the caller must provide for each of the col and dcol scratch buffers.
  std::size_t col_size() const { return col_rows() * h * w; }
};

// col[(ci*k + ki)*k + kj][oy*w + ox] = x[ci][oy + ki - k/2][ox + kj - k/2], zero outside.
void im2col(const conv_shape& s, const float* x, float* col);
// The adjoint of im2col: dx += scatter(dcol). dx is accumulated, not overwritten. dcol is
// clobbered (its zero-padding entries are zeroed).
void col2im(const conv_shape& s, float* dcol, float* dx);

// y[n,cout,h,w] = conv(x) + b, then max(., 0) when relu. col: col_size() floats of scratch.
void conv2d_forward(const conv_shape& s, const float* x, const float* wt, const float* b, float* y,
                    std::size_t n, float* col, bool relu);

// dy is dLoss/d(output, after the ReLU when relu) and is masked in place when relu. Overwrites dw
// and db with the batch SUM, or adds the batch sum to them when accumulate; dx overwritten, or
// skipped when null. col, dcol: col_size() floats.
void conv2d_backward(const conv_shape& s, const float* x, const float* wt, const float* y,
                     float* dy, float* dx, float* dw, float* db, std::size_t n, float* col,
                     float* dcol, bool relu, bool accumulate = false);

// Appends the GEMMs one conv2d_forward and conv2d_backward (with dx when need_dx) over n samples
// run. They include the products with im2col's zero padding, which the GEMMs really compute.
void conv2d_gemms(const conv_shape& s, std::size_t n, bool need_dx, std::vector<gemm_shape>& gemms);

}  // namespace troupe::models::layers
