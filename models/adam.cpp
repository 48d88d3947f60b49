// Adam (Kingma & Ba 2015, Algorithm 1, eps outside the square root) and AdamW (Loshchilov &
// Hutter 2019, as torch.optim.AdamW): with t the 1-based step,
//   adam:  g' = g + wd * p            (L2, coupled)
//   adamw: p  = p - lr * wd * p;  g' = g   (decoupled, applied before the moment update)
//   m = b1 m + (1 - b1) g';  v = b2 v + (1 - b2) g'^2
//   p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
#include <cmath>

#include "models/optimizer_base.hpp"

namespace troupe::models::optimizers {

namespace {

class adam final : public optimizer_base {
 public:
  adam(const optimizer_spec& s, std::size_t n, bool decoupled)
      : optimizer_base(decoupled ? "adamw" : "adam", s, n, {"m", "v"}), decoupled_(decoupled) {}

  void step(float* p, const float* g) override {
    ++step_;
    const double t = static_cast<double>(step_);
    const float b1 = static_cast<float>(spec_.beta1), b2 = static_cast<float>(spec_.beta2);
    const float inv_bc1 = static_cast<float>(1.0 / (1.0 - std::pow(spec_.beta1, t)));
    const float inv_bc2 = static_cast<float>(1.0 / (1.0 - std::pow(spec_.beta2, t)));
    const float lr = static_cast<float>(spec_.lr), eps = static_cast<float>(spec_.eps);
    const float wd = static_cast<float>(spec_.weight_decay);
    const float l2 = decoupled_ ? 0.0f : wd;
    const float shrink =
        decoupled_ ? static_cast<float>(1.0 - spec_.lr * spec_.weight_decay) : 1.0f;
    float* m = buffer(0);
    float* v = buffer(1);
    for (std::size_t i = 0; i < size_; ++i) {
      const float gi = g[i] + l2 * p[i];
      m[i] = b1 * m[i] + (1.0f - b1) * gi;
      v[i] = b2 * v[i] + (1.0f - b2) * gi * gi;
      p[i] = shrink * p[i] - lr * (m[i] * inv_bc1) / (std::sqrt(v[i] * inv_bc2) + eps);
    }
  }

 private:
  bool decoupled_;
};

}  // namespace

std::unique_ptr<optimizer> make_adam(const optimizer_spec& spec, std::size_t size) {
  return std::make_unique<adam>(spec, size, false);
}
std::unique_ptr<optimizer> make_adamw(const optimizer_spec& spec, std::size_t size) {
  return std::make_unique<adam>(spec, size, true);
}

}  // namespace troupe::models::optimizers
