#pragma once
// Factories of the built-in kinds, registered by registry.cpp on first use. Each throws
// troupe::input_error when the spec does not fit the architecture.
#include <memory>

#include "models/model.hpp"

namespace troupe::models::builtin {

std::unique_ptr<model> make_softmax(const model_spec& spec);
std::unique_ptr<model> make_linear(const model_spec& spec);
std::unique_ptr<model> make_mlp(const model_spec& spec);
std::unique_ptr<model> make_cnn(const model_spec& spec);

}  // namespace troupe::models::builtin
