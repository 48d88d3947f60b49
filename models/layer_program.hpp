#pragma once
// A plain description of a sequential model's layers: what each stage computes, its shapes and
// where its parameters sit in the flat buffer. Backends that do not run the model's own CPU code
// (the cuda device) build their kernels from it, so a model that can describe itself this way
// runs on every backend with the same parameter layout and the same gradients.
#include <cstddef>
#include <vector>

#include "models/layers/conv.hpp"

namespace troupe::models {

enum class loss_kind { softmax_cross_entropy, squared_error };

struct layer_op {
  enum class kind { dense, conv, maxpool2 };
  kind op = kind::dense;
  bool relu = false;
  // dense: in and out features per sample. conv: the convolution's shape. maxpool2: the input
  // image {c, h, w} in `conv` (k and cout unused); the output is {c, h/2, w/2}.
  std::size_t in = 0, out = 0;
  layers::conv_shape conv;
  std::size_t weight = 0, bias = 0;  // offsets into the flat parameter buffer (dense, conv)
};

struct layer_program {
  std::size_t input_size = 0;  // floats per sample
  std::vector<layer_op> layers;
  loss_kind loss = loss_kind::softmax_cross_entropy;
  std::size_t outputs = 0;  // floats per sample out of the last layer
  std::size_t param_count = 0;
};

}  // namespace troupe::models
