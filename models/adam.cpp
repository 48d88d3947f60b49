// Adam (Kingma & Ba 2015, Algorithm 1, eps outside the square root) and AdamW (Loshchilov &
// Hutter 2019, as torch.optim.AdamW): with t the 1-based step,
//   adam:  g' = g + wd * p            (L2, coupled)
//   adamw: p  = p - lr * wd * p;  g' = g   (decoupled, applied before the moment update)
//   m = b1 m + (1 - b1) g';  v = b2 v + (1 - b2) g'^2
//   p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
#include <cmath>

#include "core/cpu_features.hpp"
#include "models/optimizer_base.hpp"

namespace troupe::models::optimizers {

namespace {

struct adam_coeffs {
  float b1, b2, inv_bc1, inv_bc2, lr, eps, l2, shrink;
};

// The update, compiled twice below: once for the baseline ISA and once for AVX2, which takes 8
// lanes where SSE2 takes 4. The sqrt and the division bound this loop, and both are correctly
// rounded in every width, so the two copies give the same bits (no FMA is enabled in either).
__attribute__((always_inline)) inline void adam_loop(std::size_t n, float* __restrict p,
                                                     const float* __restrict g, float* __restrict m,
                                                     float* __restrict v, const adam_coeffs& c) {
  for (std::size_t i = 0; i < n; ++i) {
    const float gi = g[i] + c.l2 * p[i];
    m[i] = c.b1 * m[i] + (1.0f - c.b1) * gi;
    v[i] = c.b2 * v[i] + (1.0f - c.b2) * gi * gi;
    p[i] = c.shrink * p[i] - c.lr * (m[i] * c.inv_bc1) / (std::sqrt(v[i] * c.inv_bc2) + c.eps);
  }
}

void adam_loop_baseline(std::size_t n, float* p, const float* g, float* m, float* v,
                        const adam_coeffs& c) {
  adam_loop(n, p, g, m, v, c);
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) void adam_loop_avx2(std::size_t n, float* p, const float* g,
                                                    float* m, float* v, const adam_coeffs& c) {
  adam_loop(n, p, g, m, v, c);
}
#endif

void adam_update(std::size_t n, float* p, const float* g, float* m, float* v,
                 const adam_coeffs& c) {
#if defined(__x86_64__)
  if (cpu_has_avx2()) {
    adam_loop_avx2(n, p, g, m, v, c);
    return;
  }
#endif
  adam_loop_baseline(n, p, g, m, v, c);
}

class adam final : public optimizer_base {
 public:
  adam(const optimizer_spec& s, std::size_t n, bool decoupled)
      : optimizer_base(decoupled ? "adamw" : "adam", s, n, {"m", "v"}), decoupled_(decoupled) {}

  void update(float* p, const float* g, std::size_t lo, std::size_t n) override {
    const double t = static_cast<double>(step_);
    const float b1 = static_cast<float>(spec_.beta1), b2 = static_cast<float>(spec_.beta2);
    const float inv_bc1 = static_cast<float>(1.0 / (1.0 - std::pow(spec_.beta1, t)));
    const float inv_bc2 = static_cast<float>(1.0 / (1.0 - std::pow(spec_.beta2, t)));
    const float lr = static_cast<float>(spec_.lr), eps = static_cast<float>(spec_.eps);
    const float wd = static_cast<float>(spec_.weight_decay);
    const float l2 = decoupled_ ? 0.0f : wd;
    const float shrink =
        decoupled_ ? static_cast<float>(1.0 - spec_.lr * spec_.weight_decay) : 1.0f;
    adam_update(n, p + lo, g + lo, buffer(0) + lo, buffer(1) + lo,
                {b1, b2, inv_bc1, inv_bc2, lr, eps, l2, shrink});
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
