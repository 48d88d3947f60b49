#include "policies/data_priority.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "core/rng.hpp"

using namespace troupe::policies;

namespace {
void check_close(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]));
}
}  // namespace

TEST_CASE("priority scores: table") {
  priority_options o;
  o.epsilon = 1e-300;  // out of the way for exact values
  o.staleness_boost = 1.0;
  o.staleness_horizon = 10.0;
  const double e1 = 1.0 - std::exp(-1.0);
  // loss, staleness -> score
  check_close(priority_scores({2.0, 0.5, -1.0}, {0, 0, 0}, o), {2.0, 0.5, 1.0});
  check_close(priority_scores({1.0, 1.0}, {0, 10}, o), {1.0, 1.0 + e1});
  check_close(priority_scores({1.0}, {1e9}, o), {2.0});  // at most (1 + boost) x
  // Never seen: the largest known loss.
  check_close(priority_scores({0.3, NAN, 0.9}, {0, 0, 0}, o), {0.3, 0.9, 0.9});
  check_close(priority_scores({NAN, NAN}, {0, 0}, o), {1.0, 1.0});
  CHECK_THROWS_AS(priority_scores({1.0}, {}, o), troupe::input_error);
  CHECK_THROWS_AS(priority_scores({1.0}, {-1}, o), troupe::input_error);
  CHECK_THROWS_AS(priority_scores({INFINITY}, {0}, o), troupe::input_error);
}

TEST_CASE("sampling probabilities: table") {
  struct row {
    std::vector<double> scores;
    double alpha, mix;
    std::vector<double> want;
  };
  const row table[] = {
      {{1, 2, 3, 4}, 0.0, 0.0, {0.25, 0.25, 0.25, 0.25}},  // alpha 0: uniform
      {{0, 0, 5, 0}, 0.0, 0.0, {0.25, 0.25, 0.25, 0.25}},
      {{1, 2, 3, 4}, 1.0, 0.0, {0.1, 0.2, 0.3, 0.4}},
      {{1, 2, 3, 4}, 1.0, 0.1, {0.115, 0.205, 0.295, 0.385}},
      {{1, 4}, 0.5, 0.0, {1.0 / 3, 2.0 / 3}},
      {{1, 3}, 2.0, 0.0, {0.1, 0.9}},
      {{0, 1}, 1.0, 0.2, {0.1, 0.9}},  // the uniform floor keeps sample 0 drawable
  };
  for (const auto& r : table) {
    const auto p = sampling_probabilities(r.scores, r.alpha, r.mix);
    check_close(p, r.want);
    CHECK(std::accumulate(p.begin(), p.end(), 0.0) == doctest::Approx(1.0));
  }
  CHECK_THROWS_AS(sampling_probabilities({}, 1, 0), troupe::input_error);
  CHECK_THROWS_AS(sampling_probabilities({0, 0}, 1, 0), troupe::input_error);
  CHECK_THROWS_AS(sampling_probabilities({1, -1}, 1, 0), troupe::input_error);
  CHECK_THROWS_AS(sampling_probabilities({1}, 1, 1.5), troupe::input_error);
}

TEST_CASE("importance weights: table") {
  const std::vector<double> p{0.1, 0.2, 0.3, 0.4};  // N P = 0.4, 0.8, 1.2, 1.6
  check_close(importance_weights(p, 1.0, false), {2.5, 1.25, 1.0 / 1.2, 0.625});
  check_close(importance_weights(p, 1.0, true), {1.0, 0.5, 1.0 / 3, 0.25});
  check_close(importance_weights(p, 0.0, true), {1, 1, 1, 1});
  check_close(importance_weights(p, 0.5, true), {1.0, std::sqrt(0.5), std::sqrt(1.0 / 3), 0.5});
  check_close(importance_weights({0.25, 0.25, 0.25, 0.25}, 1.0, false), {1, 1, 1, 1});
  CHECK_THROWS_AS(importance_weights({0.0, 1.0}, 1.0), troupe::input_error);
}

TEST_CASE("alias sampler draws each outcome with its probability") {
  const std::vector<double> p{0.5, 0.0, 0.1, 0.25, 0.15, 1e-3};
  alias_sampler s{p};
  troupe::rng r{3};
  const int n = 400000;
  std::vector<int> count(p.size(), 0);
  for (int i = 0; i < n; ++i) ++count[s.draw(r)];
  const double total = std::accumulate(p.begin(), p.end(), 0.0);
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double q = p[i] / total;
    const double sd = std::sqrt(n * q * (1 - q));
    CAPTURE(i);
    CHECK(std::abs(count[i] - n * q) <= 5 * sd + 1e-9);
  }
  CHECK(count[1] == 0);  // probability 0 is never drawn
  // Unnormalised input is fine; a single outcome always comes back.
  alias_sampler one{{7.0}};
  CHECK(one.draw(r) == 0);
  CHECK_THROWS_AS(alias_sampler({}), troupe::input_error);
  CHECK_THROWS_AS(alias_sampler({0.0, 0.0}), troupe::input_error);
}

TEST_CASE("beta = 1 weighted mean is unbiased; the unweighted mean is not") {
  // 1000 samples whose loss grows with the quantity we average: prioritised sampling
  // over-represents large f, and the weights have to undo that.
  const std::size_t N = 1000;
  troupe::rng gen{17};
  std::vector<double> f(N), loss(N), stale(N);
  for (std::size_t i = 0; i < N; ++i) {
    f[i] = gen.uniform() * 10.0;
    loss[i] = 0.1 + f[i] * f[i] * (0.5 + gen.uniform());
    stale[i] = double(gen.below(3000));
  }
  const double truth = std::accumulate(f.begin(), f.end(), 0.0) / double(N);

  priority_options o;
  o.alpha = 1.0;
  o.beta = 1.0;
  o.uniform_mix = 0.05;
  const priority_sampler s{loss, stale, o};
  const auto raw = importance_weights(s.probabilities(), 1.0, false);
  const double max_raw = *std::max_element(raw.begin(), raw.end());

  troupe::rng r{5};
  const int batches = 4000;
  const std::size_t k = 32;
  double sum_w = 0, sum_w2 = 0, sum_plain = 0;
  for (int b = 0; b < batches; ++b) {
    const auto batch = s.draw(k, r);
    double est = 0, plain = 0;
    for (std::size_t j = 0; j < k; ++j) {
      // The normalised weight times max_raw is the raw (N P_i)^-1.
      est += batch.weights[j] * max_raw * f[batch.indices[j]];
      plain += f[batch.indices[j]];
    }
    est /= double(k);
    sum_w += est;
    sum_w2 += est * est;
    sum_plain += plain / double(k);
  }
  const double mean = sum_w / batches;
  const double stderr_ = std::sqrt((sum_w2 / batches - mean * mean) / batches);
  CHECK(std::abs(mean - truth) < 4 * stderr_);
  CHECK(std::abs(mean / truth - 1) < 0.01);
  const double plain = sum_plain / batches;
  CHECK(plain / truth - 1 > 0.3);  // prioritised draws favour large f
}

TEST_CASE("alpha = 0 is uniform sampling with unit weights") {
  priority_options o;
  o.alpha = 0.0;
  o.beta = 1.0;
  const priority_sampler s{{1, 100, 0.001}, {0, 0, 5000}, o};
  check_close(s.probabilities(), {1.0 / 3, 1.0 / 3, 1.0 / 3});
  check_close(s.weights(), {1, 1, 1});
}
