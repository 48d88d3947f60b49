#include "policies/placement.hpp"

#include <doctest/doctest.h>

#include "core/error.hpp"

using namespace troupe::policies;

namespace {
std::vector<group_capacity> cluster(int cpu_free, int sim_free) {
  return {{"cpu", cpu_free, 2, 1.0}, {"sim", sim_free, 1, 0.33}};
}
}  // namespace

TEST_CASE("placement: uniform spreads over every named group and waits for each") {
  queued_job j{"a", 0, 0, {}, {}, "uniform"};
  auto take = place(j, cluster(2, 1));
  REQUIRE(take.size() == 2);
  CHECK(take[0] == std::make_pair(std::string("cpu"), 2));
  CHECK(take[1] == std::make_pair(std::string("sim"), 1));
  CHECK(place(j, cluster(2, 0)).empty());
  j.groups = {"cpu"};
  CHECK(place(j, cluster(1, 0)).size() == 1);
}

TEST_CASE("placement: resource-state takes the largest free resource") {
  queued_job j{"a", 0, 0, {}, {}, "resource-state"};
  auto take = place(j, cluster(1, 1));
  REQUIRE(take.size() == 1);
  CHECK(take[0].first == "cpu");  // 1 x 1.0 > 1 x 0.33
  take = place(j, cluster(0, 1));
  REQUIRE(take.size() == 1);
  CHECK(take[0].first == "sim");
  CHECK(place(j, cluster(0, 0)).empty());
}

TEST_CASE("admission: priority order, dependencies, reservations, cancellation") {
  std::vector<queued_job> q = {
      {"low", 0, 0, {}, {"cpu"}, "uniform"},
      {"high", 5, 1, {}, {"cpu", "sim"}, "uniform"},
      {"after-low", 9, 2, {"low"}, {"sim"}, "uniform"},
  };
  // Everything free: high (priority 5) takes both groups; low waits; after-low waits on low.
  auto a = admit(q, cluster(2, 1), {});
  REQUIRE(a.start.size() == 1);
  CHECK(a.start[0].job == "high");
  CHECK(a.cancel.empty());
  // Only sim busy: high waits and reserves cpu+sim, so low (lower priority) may not take cpu.
  a = admit(q, cluster(2, 0), {});
  CHECK(a.start.empty());
  // low completed: after-low may start on sim once high is gone.
  q.erase(q.begin(), q.begin() + 2);
  a = admit(q, cluster(2, 1), {{"low", "completed"}});
  REQUIRE(a.start.size() == 1);
  CHECK(a.start[0].job == "after-low");
  a = admit(q, cluster(2, 1), {{"low", "failed"}});
  CHECK(a.start.empty());
  REQUIRE(a.cancel.size() == 1);
  CHECK(a.cancel[0] == "after-low");
}

TEST_CASE("placement: unknown group or placement is an input error") {
  queued_job j{"a", 0, 0, {}, {"gpu"}, "uniform"};
  CHECK_THROWS_AS(place(j, cluster(1, 1)), troupe::input_error);
  j.groups = {};
  j.placement = "random";
  CHECK_THROWS_AS(place(j, cluster(1, 1)), troupe::input_error);
}
