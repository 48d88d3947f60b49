// The convolutional built-in: (conv k x k -> ReLU -> 2x2 max-pool) per conv layer, then
// (fc -> ReLU) per fc width, then fc to the classes.
#include <cmath>

#include "core/error.hpp"
#include "models/builtin_models.hpp"
#include "models/sequential.hpp"

namespace troupe::models::builtin {

std::unique_ptr<model> make_cnn(const model_spec& spec) {
  if (spec.input_shape.size() != 3)
    throw input_error("model 'cnn' needs an image input_shape {C,H,W}, got " +
                      std::to_string(spec.input_shape.size()) + " dimension(s)");
  if (spec.classes < 2)
    throw input_error("model 'cnn': classes must be at least 2, got " +
                      std::to_string(spec.classes));
  const std::vector<std::size_t> hidden =
      spec.hidden.empty() ? std::vector<std::size_t>{16, 32, 128} : spec.hidden;
  const std::size_t convs =
      spec.conv_layers != 0 ? spec.conv_layers : std::max<std::size_t>(1, hidden.size() - 1);
  if (convs > hidden.size())
    throw input_error("model 'cnn': conv_layers " + std::to_string(convs) + " exceeds the " +
                      std::to_string(hidden.size()) + " entries of hidden");
  auto m = std::make_unique<sequential>("cnn", spec, make_cnn);
  for (std::size_t i = 0; i < convs; ++i) {
    m->add_conv("conv" + std::to_string(i + 1), hidden[i], spec.kernel, true);
    m->add_maxpool2();
  }
  std::size_t fc = 1;
  for (std::size_t i = convs; i < hidden.size(); ++i)
    m->add_dense("fc" + std::to_string(fc++), hidden[i], true, std::sqrt(2.0));
  m->add_dense("fc" + std::to_string(fc), spec.classes, false, 1.0);
  m->set_loss(loss_kind::softmax_cross_entropy);
  return m;
}

}  // namespace troupe::models::builtin
