// Plain SGD and heavy-ball / Nesterov momentum, PyTorch's conventions (dampening 0):
//   g' = g + wd * p
//   sgd:       p -= lr * g'
//   momentum:  v = mu * v + g';  p -= lr * v                  (v starts at 0, so v_1 = g')
//   nesterov:  v = mu * v + g';  p -= lr * (g' + mu * v)
#include "models/optimizer_base.hpp"

namespace troupe::models::optimizers {

namespace {

class sgd final : public optimizer_base {
 public:
  sgd(const optimizer_spec& s, std::size_t n) : optimizer_base("sgd", s, n, {}) {}
  void update(float* p, const float* g, std::size_t lo, std::size_t n) override {
    const float lr = static_cast<float>(spec_.lr), wd = static_cast<float>(spec_.weight_decay);
    const std::size_t end = lo + n;
    if (wd == 0.0f) {  // the common case: a pure axpy, one read fewer per element
      for (std::size_t i = lo; i < end; ++i) p[i] -= lr * g[i];
    } else {
      for (std::size_t i = lo; i < end; ++i) p[i] -= lr * (g[i] + wd * p[i]);
    }
  }
};

class momentum final : public optimizer_base {
 public:
  momentum(const optimizer_spec& s, std::size_t n) : optimizer_base("momentum", s, n, {"v"}) {}
  void update(float* p, const float* g, std::size_t lo, std::size_t n) override {
    const float lr = static_cast<float>(spec_.lr), wd = static_cast<float>(spec_.weight_decay),
                mu = static_cast<float>(spec_.momentum);
    float* v = buffer(0);
    for (std::size_t i = lo; i < lo + n; ++i) {
      const float gi = g[i] + wd * p[i];
      v[i] = mu * v[i] + gi;
      p[i] -= lr * (spec_.nesterov ? gi + mu * v[i] : v[i]);
    }
  }
};

}  // namespace

std::unique_ptr<optimizer> make_sgd(const optimizer_spec& spec, std::size_t size) {
  return std::make_unique<sgd>(spec, size);
}
std::unique_ptr<optimizer> make_momentum(const optimizer_spec& spec, std::size_t size) {
  return std::make_unique<momentum>(spec, size);
}

}  // namespace troupe::models::optimizers
