#include "policies/time_model.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "core/error.hpp"
#include "core/rng.hpp"

using troupe::policies::time_model;
using troupe::policies::time_model_options;

TEST_CASE("noise-free observations with varying batch recover a and c exactly") {
  struct row {
    double a, c;
  };
  const row table[] = {{0.02, 0.001}, {0.0, 0.5}, {1.5, 0.0001}, {0.3, 0.03}};
  for (const auto& r : table) {
    time_model m{time_model_options{0.9, 0.0, 0.5, 0.02}};
    for (double b : {16.0, 32.0, 8.0, 64.0, 24.0}) m.observe(b, r.a + r.c * b);
    REQUIRE(m.slope_identified());
    const auto f = m.fit();
    CHECK(f.a == doctest::Approx(r.a).epsilon(1e-9));
    CHECK(f.c == doctest::Approx(r.c).epsilon(1e-9));
    CHECK(m.predict(100) == doctest::Approx(r.a + r.c * 100).epsilon(1e-9));
  }
}

TEST_CASE("same batch every step: proportional model through the prior intercept") {
  struct row {
    double prior, t, b, want_a, want_c;
  };
  // prior 0: c = t / b. prior 0.01: a = 0.01, c = (t - a) / b. prior 1 with t = 0.1 is capped at
  // prior_cap * t = 0.05 so that c stays positive.
  const row table[] = {{0.0, 0.2, 32, 0.0, 0.2 / 32},
                       {0.01, 0.2, 32, 0.01, 0.19 / 32},
                       {1.0, 0.1, 10, 0.05, 0.05 / 10}};
  for (const auto& r : table) {
    time_model m{time_model_options{0.9, r.prior, 0.5, 0.02}};
    for (int i = 0; i < 5; ++i) m.observe(r.b, r.t);
    CHECK_FALSE(m.slope_identified());
    const auto f = m.fit();
    CHECK(f.a == doctest::Approx(r.want_a));
    CHECK(f.c == doctest::Approx(r.want_c));
  }
}

TEST_CASE("batches within the relative spread threshold are treated as equal") {
  time_model m{time_model_options{1.0, 0.0, 0.5, 0.02}};
  // b = 100 +- 1: std/mean = 1%, below 2%; a noisy slope from these would be meaningless.
  m.observe(99, 1.00);
  m.observe(101, 0.90);
  CHECK_FALSE(m.slope_identified());
  CHECK(m.fit().a == 0.0);
  CHECK(m.fit().c == doctest::Approx(0.95 / 100));
}

TEST_CASE("a negative fitted slope falls back to a fit through the origin") {
  time_model m{time_model_options{1.0, 0.0, 0.5, 0.02}};
  m.observe(10, 1.0);
  m.observe(20, 0.9);  // noise made the larger batch faster
  const auto f = m.fit();
  CHECK(f.a == 0.0);
  CHECK(f.c == doctest::Approx((10 * 1.0 + 20 * 0.9) / (100.0 + 400.0)));
  CHECK(f.c > 0.0);
}

TEST_CASE("forgetting follows a device that slows down; plain least squares does not") {
  auto run = [](double lambda) {
    time_model m{time_model_options{lambda, 0.0, 0.5, 0.02}};
    const double bs[] = {20, 40, 30, 50};
    for (int i = 0; i < 40; ++i) m.observe(bs[i % 4], 0.01 + 0.001 * bs[i % 4]);
    for (int i = 0; i < 30; ++i) m.observe(bs[i % 4], 0.01 + 0.002 * bs[i % 4]);  // 2x slower
    return m.fit().c;
  };
  CHECK(run(0.8) == doctest::Approx(0.002).epsilon(0.01));
  CHECK(run(1.0) < 0.0016);  // the old regime still weighs 40/70
}

TEST_CASE("noisy observations converge near the true model") {
  troupe::rng r{11};
  time_model m{time_model_options{0.98, 0.0, 0.5, 0.02}};
  for (int i = 0; i < 400; ++i) {
    const double b = 16 + double(r.below(48));
    m.observe(b, std::max(0.0, 0.05 + 0.002 * b + r.normal(0.0, 0.003)));
  }
  CHECK(m.fit().c == doctest::Approx(0.002).epsilon(0.05));
  CHECK(m.predict(40) == doctest::Approx(0.05 + 0.002 * 40).epsilon(0.02));
}

TEST_CASE("invalid input is rejected") {
  time_model m;
  CHECK_FALSE(m.ready());
  CHECK_THROWS_AS(m.fit(), troupe::input_error);
  CHECK_THROWS_AS(m.observe(0, 1.0), troupe::input_error);
  CHECK_THROWS_AS(m.observe(8, -1.0), troupe::input_error);
  CHECK_THROWS_AS(m.observe(8, NAN), troupe::input_error);
  CHECK_THROWS_AS(time_model(time_model_options{0.0}), troupe::input_error);
  CHECK_THROWS_AS(time_model(time_model_options{1.5}), troupe::input_error);
}
