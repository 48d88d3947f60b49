// The fully connected built-ins: softmax regression, linear regression and the MLP.
#include <cmath>

#include "core/error.hpp"
#include "models/builtin_models.hpp"
#include "models/sequential.hpp"

namespace troupe::models::builtin {

namespace {

void require_classes(const model_spec& spec) {
  if (spec.classes < 2)
    throw input_error("model '" + spec.kind + "': classes must be at least 2, got " +
                      std::to_string(spec.classes));
}

void require_no_hidden(const model_spec& spec) {
  if (!spec.hidden.empty())
    throw input_error("model '" + spec.kind + "' takes no hidden layers (hidden must be empty)");
}

}  // namespace

std::unique_ptr<model> make_softmax(const model_spec& spec) {
  require_classes(spec);
  require_no_hidden(spec);
  auto m = std::make_unique<sequential>("softmax", spec, make_softmax);
  m->add_dense("fc1", spec.classes, false, 1.0);
  m->set_loss(loss_kind::softmax_cross_entropy);
  return m;
}

std::unique_ptr<model> make_linear(const model_spec& spec) {
  require_no_hidden(spec);
  auto m = std::make_unique<sequential>("linear", spec, make_linear);
  m->add_dense("fc1", 1, false, 1.0);
  m->set_loss(loss_kind::squared_error);
  return m;
}

std::unique_ptr<model> make_mlp(const model_spec& spec) {
  require_classes(spec);
  const std::vector<std::size_t> hidden =
      spec.hidden.empty() ? std::vector<std::size_t>{256, 128} : spec.hidden;
  auto m = std::make_unique<sequential>("mlp", spec, make_mlp);
  std::size_t i = 1;
  for (std::size_t width : hidden)
    m->add_dense("fc" + std::to_string(i++), width, true, std::sqrt(2.0));
  m->add_dense("fc" + std::to_string(i), spec.classes, false, 1.0);
  m->set_loss(loss_kind::softmax_cross_entropy);
  return m;
}

}  // namespace troupe::models::builtin
