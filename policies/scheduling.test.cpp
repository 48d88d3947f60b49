#include "policies/scheduling.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "core/error.hpp"
#include "core/rng.hpp"

using namespace troupe::policies;

namespace {
std::vector<group_state> cluster() {
  // name, free, capacity, speed
  return {{"cpu", 4, 8, 1.0}, {"gpu-a", 2, 2, 10.0}, {"gpu-b", 6, 8, 10.0}, {"sim", 0, 4, 0.5}};
}

// A demand, the groups it may use, and the placement it must get (nothing: none exists).
struct placement_row {
  int demand;
  std::vector<std::string> allowed;
  std::optional<placement> want;
};

template <std::size_t N, class Place>
void check_placements(const placement_row (&table)[N], Place place) {
  for (const auto& r : table) {
    CAPTURE(r.demand);
    CHECK(place(cluster(), r.demand, r.allowed) == r.want);
  }
}

}  // namespace

TEST_CASE("uniform placement: table") {
  const placement_row table[] = {
      {3, {}, placement{{"cpu", 1}, {"gpu-a", 1}, {"gpu-b", 1}}},  // sim has nothing free
      {4, {}, placement{{"cpu", 1}, {"gpu-a", 1}, {"gpu-b", 2}}},  // remainder to the largest
      {9, {}, placement{{"cpu", 3}, {"gpu-a", 2}, {"gpu-b", 4}}},  // gpu-a gives all it has
      {12, {}, placement{{"cpu", 4}, {"gpu-a", 2}, {"gpu-b", 6}}}, {13, {}, std::nullopt},
      {5, {"cpu", "gpu-b"}, placement{{"cpu", 2}, {"gpu-b", 3}}},  {1, {"sim"}, std::nullopt},
  };
  check_placements(table, place_uniform);
}

TEST_CASE("resource-state placement: largest free first") {
  const placement_row table[] = {
      {3, {}, placement{{"gpu-b", 3}}},  // fits in the largest
      {6, {}, placement{{"gpu-b", 6}}},
      {8, {}, placement{{"cpu", 2}, {"gpu-b", 6}}},  // then the next largest
      {11, {}, placement{{"cpu", 4}, {"gpu-a", 1}, {"gpu-b", 6}}},
      {13, {}, std::nullopt},
      {3, {"cpu", "gpu-a"}, placement{{"cpu", 3}}},
  };
  check_placements(table, place_resource_state);
  // Equal free devices: the faster group first.
  const std::vector<group_state> tie{{"slow", 4, 4, 1.0}, {"fast", 4, 4, 2.0}};
  CHECK(place_resource_state(tie, 2) == placement{{"fast", 2}});
}

TEST_CASE("placement: invalid input") {
  CHECK_THROWS_AS(place_uniform(cluster(), 1, {"tpu"}), troupe::input_error);
  CHECK_THROWS_AS(place_uniform(cluster(), 0), troupe::input_error);
  CHECK_THROWS_AS(place_uniform({{"g", 5, 4, 1.0}}, 1), troupe::input_error);  // free > capacity
}

TEST_CASE("LPT: table and the classic tight example") {
  struct row {
    std::vector<double> p;
    std::size_t m;
    double makespan, lb;
  };
  const row table[] = {
      {{3, 3, 2, 2, 2}, 2, 7, 6},   // Graham's tight case: OPT = 6 (3+3 | 2+2+2)
      {{5, 4, 3, 3, 3}, 2, 10, 9},  // LB p_m + p_{m+1} = 9 = OPT (5+4 | 3+3+3)
      {{2, 2, 2, 2}, 3, 4, 4},      // sum/m = 2.67 but two jobs must share
      {{10, 1, 1}, 3, 10, 10},      // the longest job
      {{}, 2, 0, 0},
  };
  for (const auto& r : table) {
    const auto s = lpt_schedule(r.p, std::vector<double>(r.m, 1.0));
    CHECK(s.makespan == doctest::Approx(r.makespan));
    CHECK(makespan_lower_bound(r.p, r.m) == doctest::Approx(r.lb));
  }
  // Related machines: a 3x faster machine takes the long job.
  const auto s = lpt_schedule({9, 3, 3}, {1.0, 3.0});
  CHECK(s.machine_of[0] == 1);
  CHECK(s.makespan == doctest::Approx(4.0));  // 9/3 + 3/3 on the fast one, 3 on the slow one
  CHECK_THROWS_AS(lpt_schedule({1}, {}), troupe::input_error);
  CHECK_THROWS_AS(lpt_schedule({-1}, {1}), troupe::input_error);
}

namespace {
double brute_force_opt(const std::vector<double>& p, std::size_t m) {
  std::vector<double> load(m, 0.0);
  double best = INFINITY;
  std::function<void(std::size_t)> rec = [&](std::size_t j) {
    const double cur = *std::max_element(load.begin(), load.end());
    if (cur >= best) return;
    if (j == p.size()) {
      best = cur;
      return;
    }
    for (std::size_t k = 0; k < m; ++k) {
      load[k] += p[j];
      rec(j + 1);
      load[k] -= p[j];
      if (load[k] == 0.0) break;  // empty machines are interchangeable
    }
  };
  rec(0);
  return best;
}
}  // namespace

TEST_CASE("LPT <= (4/3 - 1/(3m)) OPT on random small instances (exact OPT)") {
  troupe::rng r{77};
  double worst = 0.0;
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t m = 2 + r.below(3);
    const std::size_t n = m + 1 + r.below(7);
    std::vector<double> p(n);
    for (auto& x : p) x = 1.0 + double(r.below(20));
    const double opt = brute_force_opt(p, m);
    const double lpt = lpt_schedule(p, std::vector<double>(m, 1.0)).makespan;
    REQUIRE(opt >= makespan_lower_bound(p, m) - 1e-9);
    CHECK(lpt <= (4.0 / 3.0 - 1.0 / (3.0 * double(m))) * opt + 1e-9);
    worst = std::max(worst, lpt / opt);
  }
  CHECK(worst > 1.0);  // the instances are not all trivial
}

TEST_CASE("LPT within 4/3 of the lower bound on random larger instances") {
  // Against a lower bound the 4/3 is not a theorem (OPT may sit above the bound, e.g. 2m + 1
  // unit jobs); the exact-OPT test above checks the theorem. This one checks that the bound the
  // scheduler reports is tight enough to judge LPT on instances too large for brute force.
  troupe::rng r{4242};
  for (int trial = 0; trial < 500; ++trial) {
    const std::size_t m = 2 + r.below(15);
    const std::size_t n = 1 + r.below(200);
    std::vector<double> p(n);
    const bool heavy = r.uniform() < 0.5;  // heavy-tailed durations half of the time
    for (auto& x : p) x = heavy ? std::exp(3.0 * r.uniform()) : 1.0 + r.uniform() * 9.0;
    const auto s = lpt_schedule(p, std::vector<double>(m, 1.0));
    const double lb = makespan_lower_bound(p, m);
    CAPTURE(trial);
    CHECK(s.makespan >= lb - 1e-9);
    CHECK(s.makespan <= (4.0 / 3.0) * lb + 1e-9);
  }
}

TEST_CASE("dependency cycles") {
  auto job = [](std::string name, std::vector<std::string> after) {
    job_request j;
    j.name = std::move(name);
    j.after = std::move(after);
    return j;
  };
  using names = std::vector<std::string>;
  CHECK_FALSE(find_dependency_cycle({job("a", {}), job("b", {"a"}), job("c", {"a", "b"})}));
  CHECK(find_dependency_cycle({job("a", {"b"}), job("b", {"a"})}) == names{"a", "b", "a"});
  CHECK(find_dependency_cycle({job("a", {"a"})}) == names{"a", "a"});
  CHECK(find_dependency_cycle({job("x", {"a"}), job("a", {"b"}), job("b", {"c"}),
                               job("c", {"a"})}) == names{"a", "b", "c", "a"});
  CHECK_FALSE(find_dependency_cycle({job("a", {"done-elsewhere"})}));
  // A long chain: no recursion depth problem.
  std::vector<job_request> chain;
  for (int i = 0; i < 100000; ++i)
    chain.push_back(job("j" + std::to_string(i), {i ? "j" + std::to_string(i - 1) : "root"}));
  CHECK_FALSE(find_dependency_cycle(chain));
}

TEST_CASE("admission: priorities, FIFO, dependencies, blocking and backfill") {
  const std::vector<group_state> groups{{"cpu", 4, 4, 1.0}, {"gpu", 2, 2, 10.0}};
  auto job = [](std::string name, int prio, int demand, std::vector<std::string> after = {}) {
    job_request j;
    j.name = std::move(name);
    j.priority = prio;
    j.demand = demand;
    j.after = std::move(after);
    return j;
  };
  using names = std::vector<std::string>;
  auto started = [](const admission_result& r) {
    names n;
    for (const auto& s : r.start) n.push_back(s.job);
    return n;
  };

  SUBCASE("higher priority first, FIFO within a priority") {
    const auto r = admit({job("low", 0, 2), job("hi1", 5, 2), job("hi2", 5, 2)}, groups, {});
    CHECK(started(r) == names{"hi1", "hi2", "low"});
    CHECK(r.start[0].where == placement{{"cpu", 1}, {"gpu", 1}});  // uniform by default
  }
  SUBCASE("dependencies: wait until completed, do not block others") {
    const auto r = admit({job("train", 5, 2, {"prep"}), job("other", 0, 2)}, groups, {}, {"prep"});
    CHECK(r.waiting_deps == names{"train"});
    CHECK(started(r) == names{"other"});
    const auto r2 = admit({job("train", 5, 2, {"prep"})}, groups, {"prep"});
    CHECK(started(r2) == names{"train"});
  }
  SUBCASE("a job that does not fit holds back later ones unless backfill") {
    const std::vector<job_request> q{job("a", 5, 4), job("big", 3, 4), job("small", 1, 1)};
    const auto strict = admit(q, groups, {});
    CHECK(started(strict) == names{"a"});
    CHECK(strict.waiting_resources == names{"big", "small"});
    const auto fill = admit(q, groups, {}, {}, admission_options{true});
    CHECK(started(fill) == names{"a", "small"});
    CHECK(fill.waiting_resources == names{"big"});
  }
  SUBCASE("infeasible demand is reported and blocks nothing") {
    const auto r = admit({job("huge", 9, 7), job("ok", 0, 1)}, groups, {});
    CHECK(r.infeasible == names{"huge"});
    CHECK(started(r) == names{"ok"});
  }
  SUBCASE("resource-state placement and allowed groups") {
    auto j = job("rs", 0, 3);
    j.kind = placement_kind::resource_state;
    auto k = job("gpu-only", 0, 1);
    k.resources = {"gpu"};
    const auto r = admit({j, k}, groups, {});
    CHECK(r.start[0].where == placement{{"cpu", 3}});
    CHECK(r.start[1].where == placement{{"gpu", 1}});
  }
  SUBCASE("input errors: cycles, unknown dependencies, duplicates") {
    try {
      admit({job("a", 0, 1, {"b"}), job("b", 0, 1, {"a"})}, groups, {});
      FAIL("expected a cycle error");
    } catch (const troupe::input_error& e) {
      CHECK(std::string(e.what()).find("a -> b -> a") != std::string::npos);
    }
    CHECK_THROWS_AS(admit({job("a", 0, 1, {"ghost"})}, groups, {}), troupe::input_error);
    CHECK_THROWS_AS(admit({job("a", 0, 1), job("a", 0, 1)}, groups, {}), troupe::input_error);
  }
}
