#pragma once
// Fully connected layer over raw row-major buffers: y = x W^T + b, W stored [out, in].
// PyTorch's layout, so checkpoints and hand-derived golden values carry over unchanged; the three
// GEMMs (forward, dW, dX) cost the same in either layout because BLAS takes the transposes as
// flags, never as copies.
#include <cstddef>
#include <vector>

#include "models/layers/gemm_shape.hpp"

namespace troupe::models::layers {

// y[n,out] = x[n,in] W^T + b, then max(., 0) when relu (fused into the bias pass).
void dense_forward(const float* x, const float* w, const float* b, float* y, std::size_t n,
                   std::size_t in, std::size_t out, bool relu);

// dy[n,out] is dLoss/d(output of this layer, after the ReLU when relu). With relu, dy is masked
// in place by y > 0, so the caller must not reuse it. Overwrites dw[out,in] and db[out] with the
// batch SUM. dx[n,in] is overwritten, or skipped when null (the first layer needs no dX).
void dense_backward(const float* x, const float* w, const float* y, float* dy, float* dx, float* dw,
                    float* db, std::size_t n, std::size_t in, std::size_t out, bool relu);

// Appends the GEMMs one forward and backward over n rows run (dense_forward, then dense_backward
// with dx when need_dx): forward, dW and dX, each 2 n in out FLOPs.
void dense_gemms(std::size_t n, std::size_t in, std::size_t out, bool need_dx,
                 std::vector<gemm_shape>& gemms);

}  // namespace troupe::models::layers
