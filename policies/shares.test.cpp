#include "policies/shares.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <numeric>

#include "core/error.hpp"

using namespace troupe::policies;

namespace {
void check_close(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]));
  CHECK(std::accumulate(got.begin(), got.end(), 0.0) == doctest::Approx(1.0));
}
}  // namespace

TEST_CASE("fixed shares: table") {
  struct row {
    std::vector<double> w, want;
  };
  const row table[] = {{{1, 1}, {0.5, 0.5}},
                       {{1, 3}, {0.25, 0.75}},
                       {{0, 2}, {0, 1}},
                       {{5}, {1}},
                       {{2, 2, 4}, {0.25, 0.25, 0.5}}};
  for (const auto& r : table) check_close(fixed_shares(r.w), r.want);
  CHECK_THROWS_AS(fixed_shares({}), troupe::input_error);
  CHECK_THROWS_AS(fixed_shares({0, 0}), troupe::input_error);
  CHECK_THROWS_AS(fixed_shares({1, -1}), troupe::input_error);
}

TEST_CASE("statistical efficiency E(B) = (Bn + B0) / (Bn + B): table") {
  struct row {
    double bn, b, b0, want;
  };
  const row table[] = {
      {100, 64, 64, 1.0},          // at the tuned batch
      {0, 256, 64, 0.25},          // no noise: each extra sample is wasted (B0 / B)
      {1e9, 256, 64, 1.0},         // noise dominated: every sample counts
      {64, 256, 64, 128.0 / 320},  // B = 4 B0 = 4 Bn
      {100, 32, 64, 164.0 / 132},  // a smaller batch is worth more per sample
  };
  for (const auto& r : table)
    CHECK(statistical_efficiency(r.bn, r.b, r.b0) == doctest::Approx(r.want));
  CHECK_THROWS_AS(statistical_efficiency(-1, 1, 1), troupe::input_error);
  CHECK_THROWS_AS(statistical_efficiency(1, 0, 1), troupe::input_error);
}

TEST_CASE("apply_floor: table") {
  struct row {
    std::vector<double> s;
    double floor;
    std::vector<double> want;
  };
  const row table[] = {
      {{0.99, 0.01}, 0.05, {0.95, 0.05}},
      {{0.5, 0.5}, 0.05, {0.5, 0.5}},
      {{0.9, 0.08, 0.02}, 0.1, {0.8 * 0.9 / 0.9, 0.1, 0.1}},  // both small ones pinned
      {{0.6, 0.3, 0.1}, 0.2, {0.8 * 0.6 / 0.9, 0.8 * 0.3 / 0.9, 0.2}},
      {{1.0, 0.0}, 0.5, {0.5, 0.5}},
  };
  for (const auto& r : table) check_close(apply_floor(r.s, r.floor), r.want);
  CHECK_THROWS_AS(apply_floor({0.5, 0.5, 0}, 0.4), troupe::input_error);
}

TEST_CASE("adaptive shares: decisions table") {
  share_options o;  // floor 0.05, damping 0.5, gamma 1, min_change 0.01
  auto job = [](double weight, double share, double throughput) {
    job_share_state j;
    j.weight = weight;
    j.share = share;
    j.throughput = throughput;
    return j;
  };
  SUBCASE("equal jobs at equal shares: hold") {
    const auto d = adaptive_shares({job(1, 0.5, 100), job(1, 0.5, 100)}, o);
    CHECK_FALSE(d.changed);
    check_close(d.shares, {0.5, 0.5});
    CHECK(d.reason.rfind("hold", 0) == 0);
  }
  SUBCASE("3x goodput per share: target 3:1, half way there") {
    const auto d = adaptive_shares({job(1, 0.5, 300), job(1, 0.5, 100)}, o);
    CHECK(d.changed);
    check_close(d.target, {0.75, 0.25});
    check_close(d.shares, {0.625, 0.375});
  }
  SUBCASE("value is per unit of share: a big share is not mistaken for a good job") {
    // Job 0 produces 3x the samples but holds 3x the share: same value, target equal.
    const auto d = adaptive_shares({job(1, 0.75, 300), job(1, 0.25, 100)}, o);
    check_close(d.target, {0.5, 0.5});
    check_close(d.shares, {0.625, 0.375});
  }
  SUBCASE("priority weight doubles the target share") {
    const auto d = adaptive_shares({job(2, 0.5, 100), job(1, 0.5, 100)}, o);
    check_close(d.target, {2.0 / 3, 1.0 / 3});
  }
  SUBCASE("the floor keeps a poor job alive") {
    const auto d = adaptive_shares({job(1, 0.5, 9900), job(1, 0.5, 100)}, o);
    check_close(d.target, {0.95, 0.05});
  }
  SUBCASE("statistical efficiency: a job far past its noise scale gets less") {
    auto a = job(1, 0.5, 100), b = job(1, 0.5, 100);
    a.batch = 64, a.b0 = 64, a.b_noise = 1000.0;  // E = 1
    b.batch = 512, b.b0 = 64, b.b_noise = 64.0;   // E = 128 / 576 = 2/9
    const auto d = adaptive_shares({a, b}, o);
    check_close(d.target, {9.0 / 11, 2.0 / 11});
  }
  SUBCASE("gamma 0 gives the fixed shares by weight") {
    share_options g = o;
    g.gamma = 0.0;
    g.damping = 1.0;
    const auto d = adaptive_shares({job(1, 0.5, 900), job(3, 0.5, 100)}, g);
    check_close(d.shares, {0.25, 0.75});
  }
  SUBCASE("unknown throughput is neutral; no shares yet starts from the weights") {
    const auto d = adaptive_shares({job(1, 0, 0), job(1, 0, 0), job(2, 0, 0)}, o);
    CHECK_FALSE(d.changed);
    check_close(d.shares, {0.25, 0.25, 0.5});
    const auto e = adaptive_shares({job(1, 0.5, 200), job(1, 0.25, 0), job(1, 0.25, 100)}, o);
    // values: 400, unknown -> mean(400, 400) = 400, 400: all equal.
    check_close(e.target, {1.0 / 3, 1.0 / 3, 1.0 / 3});
  }
  SUBCASE("small moves are not made") {
    const auto d = adaptive_shares({job(1, 0.5, 102), job(1, 0.5, 100)}, o);
    CHECK_FALSE(d.changed);  // target 0.505: a move of 0.0025
    check_close(d.shares, {0.5, 0.5});
  }
  SUBCASE("invalid input") {
    CHECK_THROWS_AS(adaptive_shares({}, o), troupe::input_error);
    CHECK_THROWS_AS(adaptive_shares({job(0, 0.5, 1)}, o), troupe::input_error);
    CHECK_THROWS_AS(adaptive_shares({job(1, -0.5, 1)}, o), troupe::input_error);
  }
}

TEST_CASE("adaptive shares converge geometrically to the goodput target and then hold") {
  // Two jobs whose samples/s scale linearly with their share: rates 400 and 100 at full device.
  std::vector<double> s{0.5, 0.5};
  int changes = 0, steps = 0;
  for (; steps < 40; ++steps) {
    std::vector<job_share_state> jobs(2);
    const double rate[] = {400, 100};
    for (int j = 0; j < 2; ++j) {
      jobs[j].share = s[j];
      jobs[j].throughput = rate[j] * s[j];
    }
    const auto d = adaptive_shares(jobs);
    if (!d.changed) break;
    ++changes;
    s = d.shares;
  }
  CHECK(changes <= 6);  // 0.3 -> 0.15 -> ... < 0.01 within six halvings
  CHECK(s[0] == doctest::Approx(0.8).epsilon(0.02));
}
