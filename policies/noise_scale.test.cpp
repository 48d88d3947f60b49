#include "policies/noise_scale.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"

using namespace troupe::policies;

TEST_CASE("noise-free points on the line y = G2 + S/b are recovered exactly") {
  struct row {
    double S, G2;
    std::vector<double> batches;
  };
  const row table[] = {
      {17.0, 1.0, {4, 20, 40, 64}},
      {0.5, 3.0, {1, 2}},
      {100.0, 0.01, {7, 7, 9, 300}},  // repeated batch sizes are fine
  };
  for (const auto& r : table) {
    std::vector<norm_point> pts;
    for (double b : r.batches) pts.push_back({b, r.G2 + r.S / b});
    const auto e = estimate_noise(pts);
    REQUIRE(e.has_value());
    CHECK(e->trace_sigma == doctest::Approx(r.S).epsilon(1e-9));
    CHECK(e->grad_sq == doctest::Approx(r.G2).epsilon(1e-9));
    CHECK(*e->b_noise() == doctest::Approx(r.S / r.G2).epsilon(1e-9));
  }
}

TEST_CASE("two points reduce to McCandlish's two-batch estimator") {
  const double bs = 8, bb = 64, gs = 2.5, gb = 1.2;
  const auto e = estimate_noise({{bs, gs}, {bb, gb}});
  REQUIRE(e.has_value());
  CHECK(e->grad_sq == doctest::Approx((bb * gb - bs * gs) / (bb - bs)));
  CHECK(e->trace_sigma == doctest::Approx((gs - gb) / (1 / bs - 1 / bb)));
}

TEST_CASE("equal worker slices are still identifiable through the global point") {
  // 4 x 32 plus the global 128: two distinct x values.
  const double S = 10, G2 = 2;
  const auto e =
      estimate_noise({32, 32, 32, 32}, std::vector<double>(4, G2 + S / 32), G2 + S / 128);
  REQUIRE(e.has_value());
  CHECK(e->trace_sigma == doctest::Approx(S));
  CHECK(e->grad_sq == doctest::Approx(G2));
  // With equal slices the naive estimator is exact too.
  const auto n = estimate_noise_equal_batch(std::vector<double>(4, G2 + S / 32), 128, G2 + S / 128);
  CHECK(n->trace_sigma == doctest::Approx(S));
  CHECK(n->grad_sq == doctest::Approx(G2));
}

TEST_CASE("degenerate and invalid inputs") {
  CHECK_FALSE(estimate_noise({{16, 1.0}}).has_value());
  CHECK_FALSE(estimate_noise({{16, 1.0}, {16, 1.2}}).has_value());  // one batch size only
  CHECK_FALSE(estimate_noise({64}, {1.0}, 1.0).has_value());        // one worker: b == B
  CHECK_FALSE(estimate_noise({0, 0}, {0, 0}, 0).has_value());
  CHECK_THROWS_AS(estimate_noise({{0, 1.0}, {2, 1.0}}), troupe::input_error);
  CHECK_THROWS_AS(estimate_noise({{1, NAN}, {2, 1.0}}), troupe::input_error);
  CHECK_THROWS_AS(estimate_noise({1, 2}, {1.0}, 1.0), troupe::input_error);
  CHECK_FALSE(noise_estimate{5.0, -0.1}.b_noise().has_value());
  CHECK_THROWS_AS(noise_scale_tracker(1.0), troupe::input_error);
  noise_scale_tracker t;
  CHECK_FALSE(t.b_noise().has_value());
}

TEST_CASE("tracker: bias-corrected EMAs of S and G2, B_noise as their ratio") {
  noise_scale_tracker t{0.5};
  t.update(noise_estimate{10.0, 1.0});
  CHECK(*t.trace_sigma() == doctest::Approx(10.0));  // corrected: not 5
  CHECK(*t.b_noise() == doctest::Approx(10.0));
  t.update(noise_estimate{30.0, -0.5});  // a negative per-step G2 is kept, not clipped
  // ema_S = 0.25*10 + 0.5*30... raw: 0.5*(0.5*10) + 0.5*30 = 17.5, corrected / 0.75.
  CHECK(*t.trace_sigma() == doctest::Approx(17.5 / 0.75));
  CHECK(*t.grad_sq() == doctest::Approx((0.25 - 0.25) / 0.75));
  CHECK_FALSE(t.b_noise().has_value());  // G2 = 0: no finite estimate
  CHECK(t.updates() == 2);
}

namespace {
// Synthetic linear regression: x ~ N(0, I_d), y = w*.x + eps, eps ~ N(0, sigma^2), loss
// 1/2 (w.x - y)^2. At w = w* + delta the per-sample gradient is g = (delta.x - eps) x, so
//   G = E g = E[x x^T] delta = delta,                          |G|^2 = |delta|^2,
//   E|g|^2 = sum_j E[(delta.x)^2 x_j^2] + sigma^2 E|x|^2
//          = sum_j (|delta|^2 + 2 delta_j^2) + d sigma^2      (Isserlis)
//          = (d + 2)|delta|^2 + d sigma^2,
//   tr(Sigma) = E|g|^2 - |G|^2 = (d + 1)|delta|^2 + d sigma^2.
struct linreg {
  std::size_t d = 8;
  double sigma = 1.0;
  std::vector<double> delta;
  linreg() : delta(d, 1.0 / std::sqrt(8.0)) {}
  double grad_sq() const {
    double s = 0;
    for (double v : delta) s += v * v;
    return s;
  }
  double trace_sigma() const { return double(d + 1) * grad_sq() + double(d) * sigma * sigma; }
  // Sum of b per-sample gradients.
  std::vector<double> grad_sum(std::int64_t b, troupe::rng& r) const {
    std::vector<double> g(d, 0.0), x(d);
    for (std::int64_t k = 0; k < b; ++k) {
      double dx = 0;
      for (std::size_t j = 0; j < d; ++j) {
        x[j] = r.normal();
        dx += delta[j] * x[j];
      }
      const double res = dx - sigma * r.normal();
      for (std::size_t j = 0; j < d; ++j) g[j] += res * x[j];
    }
    return g;
  }
};

double sq(const std::vector<double>& v, double scale) {
  double s = 0;
  for (double x : v) s += (x * scale) * (x * scale);
  return s;
}

struct run_result {
  double S, G2, bnoise;          // weighted regression, averaged over steps
  double naive_S, naive_bnoise;  // equal-batch assumption
  double tracker_bnoise;
};

// Each step: a random weighted split of B = 128 over 4 workers (some slices small).
run_result simulate(std::uint64_t seed, int steps) {
  linreg lr;
  troupe::rng r{seed};
  const std::int64_t B = 128;
  double S = 0, G2 = 0, nS = 0, nG2 = 0;
  noise_scale_tracker tracker{0.9995};
  for (int step = 0; step < steps; ++step) {
    std::vector<double> w(4);
    double wsum = 0;
    for (auto& v : w) wsum += (v = 0.02 + std::pow(r.uniform(), 3.0));
    std::vector<double> b(4);
    std::int64_t used = 0;
    for (std::size_t i = 0; i < 3; ++i) {
      b[i] = double(std::max<std::int64_t>(1, std::int64_t(w[i] / wsum * double(B))));
      used += std::int64_t(b[i]);
    }
    b[3] = double(B - used);
    std::vector<double> total(lr.d, 0.0), norms(4);
    for (std::size_t i = 0; i < 4; ++i) {
      const auto g = lr.grad_sum(std::int64_t(b[i]), r);
      norms[i] = sq(g, 1.0 / b[i]);  // the MEAN gradient of the worker's slice
      for (std::size_t j = 0; j < lr.d; ++j) total[j] += g[j];
    }
    const double global = sq(total, 1.0 / double(B));
    const auto e = estimate_noise(b, norms, global);
    REQUIRE(e.has_value());
    S += e->trace_sigma;
    G2 += e->grad_sq;
    tracker.update(*e);
    const auto n = estimate_noise_equal_batch(norms, double(B), global);
    nS += n->trace_sigma;
    nG2 += n->grad_sq;
  }
  return {S / steps, G2 / steps, S / G2, nS / steps, nS / nG2, *tracker.b_noise()};
}
}  // namespace

TEST_CASE("unequal batches: the regression matches the closed form within 5%") {
  const linreg lr;
  const double S = lr.trace_sigma(), G2 = lr.grad_sq(), bn = S / G2;
  REQUIRE(S == doctest::Approx(17.0));
  REQUIRE(G2 == doctest::Approx(1.0));
  for (std::uint64_t seed : {1u, 2u, 3u, 4u}) {
    CAPTURE(seed);
    const auto res = simulate(seed, 8000);
    MESSAGE("S ", res.S / S - 1, " G2 ", res.G2 / G2 - 1, " B ", res.bnoise / bn - 1, " ema ",
            res.tracker_bnoise / bn - 1, " naive ", res.naive_bnoise / bn - 1);
    CHECK(std::abs(res.S / S - 1) < 0.05);
    CHECK(std::abs(res.G2 / G2 - 1) < 0.05);
    CHECK(std::abs(res.bnoise / bn - 1) < 0.05);
    // The EMA (horizon ~2000 steps) lands within 5% as well.
    CHECK(std::abs(res.tracker_bnoise / bn - 1) < 0.05);
    // The equal-batch estimator is badly biased under this split: it reads the small slices'
    // extra noise as signal variance.
    const double naive_err = std::abs(res.naive_bnoise / bn - 1);
    CHECK(naive_err > 0.5);
    CHECK(naive_err > 10 * std::abs(res.bnoise / bn - 1));
    CHECK(res.naive_S > 1.5 * S);
  }
}
