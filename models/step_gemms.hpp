#pragma once
// The matrix multiplies of one training step (forward and backward through every layer) of a
// layer program at a given batch size, as the CPU layers run them, and their FLOP count. This is
// the numerator of a step's achieved GFLOP/s and the list of shapes a benchmark times BLAS at.
// Only the GEMMs are counted: bias, ReLU, pooling, im2col and the loss are element-wise or
// copies, a few percent of the FLOPs at most, and the GEMMs set the attainable speed.
#include <cstddef>
#include <vector>

#include "models/layer_program.hpp"
#include "models/layers/gemm_shape.hpp"

namespace troupe::models {

// In layer order, each layer's forward GEMMs then its backward ones. The first layer computes no
// input gradient (nothing consumes it), so it has none of those GEMMs.
std::vector<layers::gemm_shape> training_gemms(const layer_program& program, std::size_t batch);

// The sum of flops() over gemms.
double total_flops(const std::vector<layers::gemm_shape>& gemms);

}  // namespace troupe::models
