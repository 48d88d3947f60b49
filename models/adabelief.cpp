// AdaBelief (Zhuang et al. 2020, Algorithm 2, no rectification) and Max-AdaBelief. With t the
// 1-based step and g' = g + wd * p (L2 into the gradient, like adam; the paper has no decay):
//   m = b1 m + (1 - b1) g';  s = b2 s + (1 - b2) (g' - m)^2 + eps
//   p -= lr * (m / (1 - b1^t)) / (sqrt(s / (1 - b2^t)) + eps)
// Max-AdaBelief is documented in max_adabelief.hpp.
#include <algorithm>
#include <cmath>

#include "models/max_adabelief.hpp"
#include "models/optimizer_base.hpp"

namespace troupe::models {

namespace {

struct corrections {
  float inv_bc1, inv_bc2;
};
corrections bias_corrections(const optimizer_spec& h, std::int64_t t) {
  const double td = static_cast<double>(t);
  return {static_cast<float>(1.0 / (1.0 - std::pow(h.beta1, td))),
          static_cast<float>(1.0 / (1.0 - std::pow(h.beta2, td)))};
}

}  // namespace

namespace max_adabelief {

// __restrict: the buffers never alias, and saying so lets the loop vectorise (4x here).
void local_moments(const optimizer_spec& h, std::int64_t t, std::size_t n,
                   const float* __restrict params, const float* __restrict grad,
                   float* __restrict m, float* __restrict s, float* __restrict s_max,
                   float* __restrict m_hat, float* __restrict s_hat) {
  const corrections c = bias_corrections(h, t);
  const float b1 = static_cast<float>(h.beta1), b2 = static_cast<float>(h.beta2);
  const float eps = static_cast<float>(h.eps), wd = static_cast<float>(h.weight_decay);
  for (std::size_t i = 0; i < n; ++i) {
    const float g = wd != 0.0f ? grad[i] + wd * params[i] : grad[i];
    m[i] = b1 * m[i] + (1.0f - b1) * g;
    const float r = g - m[i];
    s[i] = b2 * s[i] + (1.0f - b2) * r * r + eps;
    s_max[i] = std::max(s_max[i], s[i]);
    m_hat[i] = m[i] * c.inv_bc1;
    s_hat[i] = s_max[i] * c.inv_bc2;
  }
}

void apply_update(const optimizer_spec& h, std::size_t n, float* __restrict params,
                  const float* __restrict m_hat, const float* __restrict s_hat) {
  const float lr = static_cast<float>(h.lr), eps = static_cast<float>(h.eps);
  for (std::size_t i = 0; i < n; ++i) params[i] -= lr * m_hat[i] / (std::sqrt(s_hat[i]) + eps);
}

}  // namespace max_adabelief

namespace optimizers {

namespace {

class adabelief final : public optimizer_base {
 public:
  adabelief(const optimizer_spec& s, std::size_t n)
      : optimizer_base("adabelief", s, n, {"m", "s"}) {}
  void update(float* p, const float* g, std::size_t lo, std::size_t n) override {
    const corrections c = bias_corrections(spec_, step_);
    const float b1 = static_cast<float>(spec_.beta1), b2 = static_cast<float>(spec_.beta2);
    const float lr = static_cast<float>(spec_.lr), eps = static_cast<float>(spec_.eps);
    const float wd = static_cast<float>(spec_.weight_decay);
    float* m = buffer(0);
    float* s = buffer(1);
    for (std::size_t i = lo; i < lo + n; ++i) {
      const float gi = g[i] + wd * p[i];
      m[i] = b1 * m[i] + (1.0f - b1) * gi;
      const float r = gi - m[i];
      s[i] = b2 * s[i] + (1.0f - b2) * r * r + eps;
      p[i] -= lr * (m[i] * c.inv_bc1) / (std::sqrt(s[i] * c.inv_bc2) + eps);
    }
  }
};

class max_adabelief_opt final : public optimizer_base {
 public:
  max_adabelief_opt(const optimizer_spec& s, std::size_t n)
      : optimizer_base("max-adabelief", s, n, {"m", "s", "s_max"}), m_hat_(n), s_hat_(n) {}
  void update(float* p, const float* g, std::size_t lo, std::size_t n) override {
    max_adabelief::local_moments(spec_, step_, n, p + lo, g + lo, buffer(0) + lo, buffer(1) + lo,
                                 buffer(2) + lo, m_hat_.data() + lo, s_hat_.data() + lo);
    max_adabelief::apply_update(spec_, n, p + lo, m_hat_.data() + lo, s_hat_.data() + lo);
  }

 private:
  std::vector<float> m_hat_, s_hat_;  // scratch, not state
};

}  // namespace

std::unique_ptr<optimizer> make_adabelief(const optimizer_spec& spec, std::size_t size) {
  return std::make_unique<adabelief>(spec, size);
}
std::unique_ptr<optimizer> make_max_adabelief(const optimizer_spec& spec, std::size_t size) {
  return std::make_unique<max_adabelief_opt>(spec, size);
}

}  // namespace optimizers

}  // namespace troupe::models
