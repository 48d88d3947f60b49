#include "policies/preemption.hpp"

#include <doctest/doctest.h>

using namespace troupe::policies;

namespace {

job_request wants(int priority, int demand, std::vector<std::string> resources = {}) {
  job_request r;
  r.name = "high";
  r.priority = priority;
  r.demand = demand;
  r.resources = std::move(resources);
  return r;
}

preemption_candidate running(std::string job, int priority, std::int64_t seq, placement held,
                             bool preemptible = true) {
  preemption_candidate c;
  c.job = std::move(job);
  c.priority = priority;
  c.seq = seq;
  c.preemptible = preemptible;
  c.held = std::move(held);
  return c;
}

// Two groups of 2 devices, all held: cpu by `a`, sim by `b`.
std::vector<group_state> full() {
  return {{"cpu", 0, 2, 1.0}, {"sim", 0, 2, 0.5}};
}

}  // namespace

TEST_CASE("the lowest-priority preemptible job that makes room is paused, and only it") {
  const auto victims = preemption_victims(
      wants(5, 2), full(), {running("a", 1, 1, {{"cpu", 2}}), running("b", 0, 2, {{"sim", 2}})});
  CHECK(victims == std::vector<std::string>{"b"});
}

TEST_CASE("among equal priorities the newest job is paused first") {
  const auto victims =
      preemption_victims(wants(5, 2), full(),
                         {running("old", 0, 1, {{"cpu", 2}}), running("new", 0, 7, {{"sim", 2}})});
  CHECK(victims == std::vector<std::string>{"new"});
}

TEST_CASE("jobs of equal or higher priority, and jobs not preemptible, are never paused") {
  CHECK(preemption_victims(wants(1, 2), full(),
                           {running("a", 1, 1, {{"cpu", 2}}), running("b", 3, 2, {{"sim", 2}})})
            .empty());
  CHECK(preemption_victims(
            wants(5, 2), full(),
            {running("a", 0, 1, {{"cpu", 2}}, false), running("b", 0, 2, {{"sim", 2}}, false)})
            .empty());
}

TEST_CASE("nothing is paused when the waiting job would not fit even then") {
  // It needs 4 devices of cpu; only 2 exist there.
  CHECK(preemption_victims(wants(5, 4, {"cpu"}), full(),
                           {running("a", 0, 1, {{"cpu", 2}}), running("b", 0, 2, {{"sim", 2}})})
            .empty());
}

TEST_CASE("several jobs are paused when one is not enough, lowest priority first") {
  const auto victims = preemption_victims(
      wants(5, 4), full(), {running("a", 2, 1, {{"cpu", 2}}), running("b", 1, 2, {{"sim", 2}})});
  CHECK(victims == std::vector<std::string>{"b", "a"});
}

TEST_CASE("the group the waiting job may use decides which job is paused") {
  const auto victims =
      preemption_victims(wants(5, 2, {"cpu"}), full(),
                         {running("a", 1, 1, {{"cpu", 2}}), running("b", 0, 2, {{"sim", 2}})});
  CHECK(victims == std::vector<std::string>{"a"});
}

TEST_CASE("a job already being paused makes room: no second job is paused for the same wait") {
  auto pausing = running("b", 0, 2, {{"sim", 2}});
  pausing.pausing = true;
  CHECK(
      preemption_victims(wants(5, 2), full(), {running("a", 0, 1, {{"cpu", 2}}), pausing}).empty());
}

TEST_CASE("a job that fits already pauses nobody") {
  auto groups = full();
  groups[0].free = 2;
  CHECK(preemption_victims(wants(5, 2), groups, {running("a", 0, 1, {{"sim", 2}})}).empty());
}
