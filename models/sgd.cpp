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
  void step(float* p, const float* g) override {
    const float lr = static_cast<float>(spec_.lr), wd = static_cast<float>(spec_.weight_decay);
    if (wd == 0.0f) {  // the common case: a pure axpy, one read fewer per element
      for (std::size_t i = 0; i < size_; ++i) p[i] -= lr * g[i];
    } else {
      for (std::size_t i = 0; i < size_; ++i) p[i] -= lr * (g[i] + wd * p[i]);
    }
    ++step_;
  }
};

class momentum final : public optimizer_base {
 public:
  momentum(const optimizer_spec& s, std::size_t n) : optimizer_base("momentum", s, n, {"v"}) {}
  void step(float* p, const float* g) override {
    const float lr = static_cast<float>(spec_.lr), wd = static_cast<float>(spec_.weight_decay),
                mu = static_cast<float>(spec_.momentum);
    float* v = buffer(0);
    for (std::size_t i = 0; i < size_; ++i) {
      const float gi = g[i] + wd * p[i];
      v[i] = mu * v[i] + gi;
      p[i] -= lr * (spec_.nesterov ? gi + mu * v[i] : v[i]);
    }
    ++step_;
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
