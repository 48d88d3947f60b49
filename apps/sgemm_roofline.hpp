#pragma once
// OpenBLAS's own speed at a training step's GEMM shapes: what `troupe bench train` compares the
// step's achieved GFLOP/s with. A step cannot beat BLAS on its own multiplies, so the ratio says
// how much of the step goes to everything else (copies, element-wise passes, the optimizer).
#include <vector>

#include "models/layers/gemm_shape.hpp"

namespace troupe::apps {

// Seconds one cblas_sgemm call of g's shape takes (g.calls ignored), at OpenBLAS's current thread
// count: the median over rounds of back-to-back calls on the same operands, so they sit in cache
// (BLAS's best case; a layer's operands are mostly still in cache from the layer before).
double sgemm_call_seconds(const models::layers::gemm_shape& g);

// The GFLOP/s the step would reach if every one of its GEMMs ran at single-call speed and nothing
// else took time: total FLOPs over the sum of calls x sgemm_call_seconds. Each distinct shape is
// timed once. 0 when there are no FLOPs.
double sgemm_gflops(const std::vector<models::layers::gemm_shape>& gemms);

}  // namespace troupe::apps
