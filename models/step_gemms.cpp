#include "models/step_gemms.hpp"

#include "models/layers/conv.hpp"
#include "models/layers/dense.hpp"

namespace troupe::models {

std::vector<layers::gemm_shape> training_gemms(const layer_program& program, std::size_t batch) {
  std::vector<layers::gemm_shape> gemms;
  for (std::size_t i = 0; i < program.layers.size(); ++i) {
    const layer_op& op = program.layers[i];
    const bool need_dx = i != 0;  // sequential passes the first layer no dx
    switch (op.op) {
      case layer_op::kind::dense:
        layers::dense_gemms(batch, op.in, op.out, need_dx, gemms);
        break;
      case layer_op::kind::conv:
        layers::conv2d_gemms(op.conv, batch, need_dx, gemms);
        break;
      case layer_op::kind::maxpool2:
        break;  // comparisons and copies only
    }
  }
  return gemms;
}

double total_flops(const std::vector<layers::gemm_shape>& gemms) {
  double sum = 0.0;
  for (const auto& g : gemms) sum += g.flops();
  return sum;
}

}  // namespace troupe::models
