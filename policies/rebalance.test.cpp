#include "policies/rebalance.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "core/error.hpp"
#include "core/rng.hpp"

using namespace troupe::policies;
using slices = std::vector<std::int64_t>;

TEST_CASE("equal_finish_split: table") {
  struct row {
    const char* what;
    std::vector<linear_time> models;
    std::int64_t B, min;
    slices want;
  };
  const row table[] = {
      {"identical workers: even, remainder to the first",
       {{0, 1}, {0, 1}, {0, 1}},
       10,
       1,
       {4, 3, 3}},
      {"no fixed cost: inversely proportional to c", {{0, 1}, {0, 2}, {0, 4}}, 70, 1, {40, 20, 10}},
      {"a very slow worker stays at the floor", {{0, 1}, {0, 1}, {0, 100}}, 20, 1, {10, 9, 1}},
      {"floor 0 lets a hopeless worker sit out", {{0, 1}, {0, 1}, {50, 1}}, 20, 0, {10, 10, 0}},
      // 3T - 0.5 = 3 (in units of c = 0.01): T = 7/6, b = {66.7, 116.7, 116.7}.
      {"a fixed cost shifts samples away",
       {{0.5, 0.01}, {0, 0.01}, {0, 0.01}},
       300,
       1,
       {67, 117, 116}},
      {"exactly n * min", {{0, 1}, {0, 3}}, 8, 4, {4, 4}},
      {"one worker takes all", {{0.3, 0.2}}, 17, 1, {17}},
  };
  for (const auto& r : table) {
    CAPTURE(r.what);
    const auto got = equal_finish_split(r.models, r.B, r.min);
    CHECK(got == r.want);
  }
}

TEST_CASE("equal_finish_real: every active worker finishes at T") {
  const std::vector<linear_time> models{{0.1, 0.01}, {0.0, 0.02}, {0.05, 0.005}, {2.0, 0.01}};
  const auto s = equal_finish_real(models, 200.0, 1.0);
  CHECK(std::accumulate(s.slices.begin(), s.slices.end(), 0.0) == doctest::Approx(200.0));
  for (std::size_t i = 0; i < 3; ++i)
    CHECK(models[i].at(s.slices[i]) == doctest::Approx(s.finish_time));
  CHECK(s.slices[3] == 1.0);  // its fixed cost alone exceeds T
  CHECK(models[3].at(1.0) > s.finish_time);
}

namespace {
// Brute force over every composition of B into n parts >= m.
double brute_force_makespan(const std::vector<linear_time>& models, std::int64_t B,
                            std::int64_t m) {
  const std::size_t n = models.size();
  double best = INFINITY;
  slices b(n, m);
  std::function<void(std::size_t, std::int64_t)> rec = [&](std::size_t i, std::int64_t left) {
    if (i + 1 == n) {
      b[i] = left;
      best = std::min(best, predicted_makespan(models, b));
      return;
    }
    for (std::int64_t v = m; v <= left - m * std::int64_t(n - i - 1); ++v) {
      b[i] = v;
      rec(i + 1, left - v);
    }
  };
  rec(0, B);
  return best;
}
}  // namespace

TEST_CASE("equal_finish_split is optimal against brute force on random small instances") {
  troupe::rng r{2024};
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t n = 2 + r.below(3);
    const std::int64_t m = std::int64_t(r.below(3));
    const std::int64_t B = std::int64_t(n) * m + std::int64_t(r.below(30));
    std::vector<linear_time> models(n);
    for (auto& x : models) x = {r.uniform() < 0.3 ? 0.0 : r.uniform() * 2.0, 0.05 + r.uniform()};
    const auto got = equal_finish_split(models, B, m);
    CAPTURE(trial);
    REQUIRE(std::accumulate(got.begin(), got.end(), std::int64_t{0}) == B);
    for (auto v : got) REQUIRE(v >= m);
    CHECK(predicted_makespan(models, got) ==
          doctest::Approx(brute_force_makespan(models, B, m)).epsilon(1e-12));
  }
}

TEST_CASE("equal_finish_split: large batches sum exactly and respect the floor") {
  troupe::rng r{5};
  for (int trial = 0; trial < 100; ++trial) {
    const std::size_t n = 1 + r.below(16);
    const std::int64_t m = 1 + std::int64_t(r.below(8));
    const std::int64_t B = std::int64_t(n) * m + std::int64_t(r.below(100000));
    std::vector<linear_time> models(n);
    for (auto& x : models) x = {r.uniform() * 0.1, 1e-5 + r.uniform() * 1e-3};
    const auto got = equal_finish_split(models, B, m);
    CHECK(std::accumulate(got.begin(), got.end(), std::int64_t{0}) == B);
    CHECK(*std::min_element(got.begin(), got.end()) >= m);
    // Integer makespan is within one sample of the real optimum.
    const auto real = equal_finish_real(models, double(B), double(m));
    double max_c = 0;
    for (auto& x : models) max_c = std::max(max_c, x.c);
    CHECK(predicted_makespan(models, got) <=
          std::max(real.finish_time, 0.0) + max_c + 1e-12 +
              [&] {  // workers pinned at the floor may exceed T on their own
                double w = 0;
                for (std::size_t i = 0; i < n; ++i)
                  if (got[i] == m) w = std::max(w, models[i].at(double(m)));
                return w;
              }());
  }
}

TEST_CASE("equal_finish_split: invalid input") {
  CHECK_THROWS_AS(equal_finish_split({}, 10, 1), troupe::input_error);
  CHECK_THROWS_AS(equal_finish_split({{0, 1}, {0, 1}}, 3, 2), troupe::input_error);
  CHECK_THROWS_AS(equal_finish_split({{0, 0}}, 3, 1), troupe::input_error);
  CHECK_THROWS_AS(equal_finish_split({{-1, 1}}, 3, 1), troupe::input_error);
  CHECK_THROWS_AS(equal_finish_split({{0, NAN}}, 3, 1), troupe::input_error);
  CHECK_THROWS_AS(equal_finish_split({{0, 1}}, 3, -1), troupe::input_error);
}

TEST_CASE("round_largest_remainder: table") {
  struct row {
    std::vector<double> v;
    std::int64_t B, m;
    slices want;
  };
  const row table[] = {
      {{1.5, 1.5, 7.0}, 10, 0, {2, 1, 7}},  // tie on .5: lower index first
      {{0.2, 0.3, 9.5}, 10, 1, {1, 1, 8}},  // raised to the floor, taken back from the rest
      {{3.9, 3.1, 3.0}, 10, 0, {4, 3, 3}},  // largest fraction wins
      {{2.0, 2.0, 2.0, 4.0}, 10, 2, {2, 2, 2, 4}},
  };
  for (const auto& r : table) CHECK(round_largest_remainder(r.v, r.B, r.m) == r.want);
}

TEST_CASE("rebalancer: decisions table") {
  const std::vector<linear_time> even{{0, 0.01}, {0, 0.01}, {0, 0.01}, {0, 0.01}};
  const std::vector<linear_time> slow0{{0, 0.02}, {0, 0.01}, {0, 0.01}, {0, 0.01}};
  rebalancer rb{rebalance_options{0.5, 0.05, 0.05, 1}};

  SUBCASE("a mismatched split is replaced by the target outright") {
    auto d = rb.decide(slow0, {64, 64, 64}, 256);
    CHECK(d.changed);
    CHECK(d.slices == slices{37, 73, 73, 73});
    CHECK(d.reason.rfind("reset", 0) == 0);
    d = rb.decide(slow0, {64, 64, 64, 63}, 256);  // sum != B
    CHECK(d.changed);
  }
  SUBCASE("balanced: hold") {
    const auto d = rb.decide(even, {64, 64, 64, 64}, 256);
    CHECK_FALSE(d.changed);
    CHECK(d.slices == slices{64, 64, 64, 64});
    CHECK(d.reason.rfind("hold", 0) == 0);
  }
  SUBCASE("within hysteresis: a 2-sample imbalance is not worth moving") {
    // makespan 0.66 vs 0.64 optimum: 3% gain, 0.8% drift.
    const auto d = rb.decide(even, {66, 62, 64, 64}, 256);
    CHECK_FALSE(d.changed);
    CHECK(d.current_makespan == doctest::Approx(0.66));
  }
  SUBCASE("a 2x slower worker: move half way toward the target") {
    // target {37, 73, 73, 73}; half way from 64 each: {50.5, 68.5, 68.5, 68.5}.
    const auto d = rb.decide(slow0, {64, 64, 64, 64}, 256);
    CHECK(d.changed);
    CHECK(std::accumulate(d.slices.begin(), d.slices.end(), std::int64_t{0}) == 256);
    CHECK(d.slices[0] == 51);
    CHECK(d.current_makespan == doctest::Approx(1.28));
    CHECK(d.target_makespan == doctest::Approx(0.74));
    CHECK(d.predicted_makespan == doctest::Approx(1.02));
    CHECK(d.reason.rfind("rebalance", 0) == 0);
  }
  SUBCASE("damping 1 jumps to the target") {
    rebalancer full{rebalance_options{1.0, 0.05, 0.05, 1}};
    CHECK(full.decide(slow0, {64, 64, 64, 64}, 256).slices == slices{37, 73, 73, 73});
  }
  SUBCASE("large drift with a small gain still moves (fixed costs dominate)") {
    // a = 1 s dominates: the gain is < 5% but 25% of the samples are misplaced.
    const std::vector<linear_time> fixed{{1, 0.0001}, {1, 0.0002}};
    const auto d = rb.decide(fixed, {50, 150}, 200);
    CHECK(d.changed);
    CHECK((d.current_makespan - d.target_makespan) / d.current_makespan < 0.05);
  }
}

TEST_CASE("rebalancer re-converges after a slowdown within a few steps and then holds") {
  // 4 workers; worker 2 becomes 3x slower. Exact models: count steps until the split settles.
  std::vector<linear_time> models{{0.01, 0.001}, {0.01, 0.001}, {0.01, 0.001}, {0.01, 0.001}};
  const std::int64_t B = 400;
  rebalancer rb;
  slices split = equal_finish_split(models, B, 1);
  CHECK(split == slices{100, 100, 100, 100});
  models[2].c = 0.003;
  const auto target = equal_finish_split(models, B, 1);
  std::vector<slices> history;
  int changes = 0;
  for (int step = 0; step < 30; ++step) {
    const auto d = rb.decide(models, split, B);
    changes += d.changed;
    split = d.slices;
    history.push_back(split);
  }
  const auto k = steps_to_reconverge(history, target, 0.05);
  REQUIRE(k.has_value());
  CHECK(*k <= 5);
  CHECK(changes <= 6);  // then it holds: no churn
  CHECK(predicted_makespan(models, split) <= 1.05 * predicted_makespan(models, target) + 1e-12);
}

TEST_CASE("hysteresis suppresses churn under noisy time models") {
  // True models are equal; the fitted ones carry 2% noise each step (a smoothed time model is
  // quieter than that). Without a threshold nearly every step reshuffles samples.
  auto churn = [](rebalance_options o) {
    troupe::rng r{99};
    rebalancer rb{o};
    slices split{100, 100, 100, 100};
    int changes = 0;
    for (int step = 0; step < 200; ++step) {
      std::vector<linear_time> noisy(4);
      for (auto& m : noisy) m = {0.0, 0.001 * (1.0 + 0.02 * r.normal())};
      const auto d = rb.decide(noisy, split, 400);
      changes += d.changed;
      split = d.slices;
    }
    return changes;
  };
  const int with = churn(rebalance_options{0.5, 0.05, 0.05, 1});
  const int without = churn(rebalance_options{0.5, 0.0, 0.0, 1});
  CHECK(with <= 2);
  CHECK(without >= 150);
}

TEST_CASE("steps_to_reconverge: table") {
  const slices t{10, 10};
  struct row {
    std::vector<slices> history;
    double tol;
    std::optional<std::size_t> want;
  };
  const row table[] = {
      {{{10, 10}, {10, 10}}, 0.0, std::size_t{0}},
      {{{16, 4}, {13, 7}, {11, 9}, {10, 10}}, 0.0, std::size_t{3}},
      {{{16, 4}, {13, 7}, {11, 9}, {10, 10}}, 0.05, std::size_t{2}},
      {{{16, 4}, {10, 10}, {14, 6}, {10, 10}}, 0.05, std::size_t{3}},  // left and came back
      {{{16, 4}, {10, 10}, {14, 6}}, 0.05, std::nullopt},
  };
  for (const auto& r : table) CHECK(steps_to_reconverge(r.history, t, r.tol) == r.want);
  // Without a target: the split it settled on.
  CHECK(steps_to_reconverge({{16, 4}, {12, 8}, {12, 8}}, 0.0) == std::size_t{1});
  CHECK(split_distance({16, 4}, {10, 10}) == doctest::Approx(0.3));
  CHECK_THROWS_AS(split_distance({1}, {1, 2}), troupe::input_error);
}
