#include "actors/specs.hpp"

namespace troupe::actors {

models::model_spec model_spec_of(const config::model_config& c, const data::dataset& train) {
  models::model_spec spec;
  spec.kind = c.kind;
  spec.input_shape = train.sample_shape;
  spec.classes = train.classes;
  spec.hidden = c.hidden;
  spec.conv_layers = c.conv_layers;
  spec.kernel = c.kernel;
  return spec;
}

models::optimizer_spec optimizer_spec_of(const config::optimizer_config& c) {
  models::optimizer_spec os;
  os.kind = name_of(c.kind);
  os.lr = c.lr;
  os.momentum = c.momentum;
  os.nesterov = c.nesterov;
  os.beta1 = c.beta1;
  os.beta2 = c.beta2;
  os.eps = c.eps;
  os.weight_decay = c.weight_decay;
  return os;
}

}  // namespace troupe::actors
