#pragma once
// One matrix multiply a layer runs, as cblas_sgemm sees it (row-major, C[m,n] = op(A)[m,k]
// op(B)[k,n]), and how many times a step runs it. The layers report these next to their code, so
// a step's FLOPs are counted from what it really computes, and a benchmark can time BLAS alone
// at the very same shapes.
#include <cstddef>

namespace troupe::models::layers {

struct gemm_shape {
  bool trans_a = false, trans_b = false;
  std::size_t m = 0, n = 0, k = 0;
  std::size_t calls = 1;

  // Multiplies and adds, counted as two FLOPs each, over all `calls`.
  double flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
           static_cast<double>(calls);
  }
};

}  // namespace troupe::models::layers
