#include <map>
#include <mutex>

#include "core/error.hpp"
#include "models/builtin_models.hpp"

namespace troupe::models {

namespace {

std::map<std::string, model_factory> builtins() {
  return {{"softmax", builtin::make_softmax},
          {"linear", builtin::make_linear},
          {"mlp", builtin::make_mlp},
          {"cnn", builtin::make_cnn}};
}

struct registry {
  std::mutex mu;
  std::map<std::string, model_factory> factories = builtins();
};

// A function-local static rather than namespace-scope registrars: the linker drops unreferenced
// objects of a static library, and with them any self-registering initialisers.
registry& the_registry() {
  static registry r;
  return r;
}

}  // namespace

void register_model(const std::string& kind, model_factory factory) {
  if (kind.empty()) throw input_error("register_model: empty model kind");
  if (!factory) throw input_error("register_model: no factory for model kind '" + kind + "'");
  auto& r = the_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.factories[kind] = std::move(factory);
}

std::unique_ptr<model> make_model(const model_spec& spec) {
  model_factory f;
  {
    auto& r = the_registry();
    std::lock_guard<std::mutex> lock(r.mu);
    const auto it = r.factories.find(spec.kind);
    if (it == r.factories.end()) {
      std::string known;
      for (const auto& [k, _] : r.factories) known += (known.empty() ? "" : ", ") + k;
      throw input_error("unknown model kind '" + spec.kind + "' (known: " + known + ")");
    }
    f = it->second;
  }
  auto m = f(spec);
  if (!m) throw input_error("model kind '" + spec.kind + "': factory returned no model");
  return m;
}

std::vector<std::string> model_kinds() {
  auto& r = the_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> kinds;
  for (const auto& [k, _] : r.factories) kinds.push_back(k);
  return kinds;
}

}  // namespace troupe::models
