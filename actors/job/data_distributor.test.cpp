// The data distributor on CAF's deterministic scheduler (it runs detached in a job, but nothing
// in it needs its own thread: spawned here on the test scheduler, every message is handled when
// the test says). Its plans cover a pass exactly once, cut each step by the split weights, and
// drop what belongs to an older membership generation.
#include "actors/job/data_distributor.hpp"

#include <doctest/doctest.h>

#include "actors/common/actor_testing.hpp"

#include <chrono>
#include <numeric>
#include <optional>
#include <vector>

using namespace troupe;
using namespace troupe::actors;

namespace {

constexpr msg::job_id job = 9;
constexpr msg::generation_id generation = 3;
constexpr std::int64_t batch = 64;

struct plan_reply {
  msg::step_plan plan;
  msg::local_ref<msg::index_list> indices;
};

struct fixture : testing::job_stand_in {
  caf::actor& dist = actor;  // the plans come back to job_actor
  std::size_t train_n = 0;

  fixture() {
    dist = sys.spawn(data_distributor, job, generation,
                     testing::small_mlp_job("dist", 3, 1000, batch), std::int64_t{0});
    sched.run();
    job_actor->send(dist, msg::data_atom_v);
    sched.run();
    job_actor->receive(
        [&](const msg::local_ref<data_bundle>& b) {
          REQUIRE(b);
          train_n = b->train->n;
        },
        caf::after(std::chrono::seconds(0)) >> [] { FAIL("no data bundle"); });
    REQUIRE(train_n > 0);
  }

  void split(msg::generation_id e, std::vector<double> weights) {
    job_actor->send(dist, msg::split_update{job, e, std::move(weights)});
    sched.run();
  }
  // The plan the distributor answers to a plan_request, or nothing when it dropped it.
  std::optional<plan_reply> request(msg::generation_id e, std::int64_t step) {
    job_actor->send(dist, msg::plan_request{job, e, step});
    sched.run();
    std::optional<plan_reply> out;
    job_actor->receive(
        [&](const msg::step_plan& p, const msg::local_ref<msg::index_list>& l) {
          out = plan_reply{p, l};
        },
        caf::after(std::chrono::seconds(0)) >> [] {});
    return out;
  }
};

std::int64_t sum(const std::vector<std::int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), std::int64_t{0});
}

}  // namespace

TEST_CASE_FIXTURE(fixture, "the plans of one pass cover every training sample exactly once") {
  split(generation, {1, 1, 1});
  const auto steps = static_cast<std::int64_t>((train_n + batch - 1) / batch);
  std::vector<int> seen(train_n, 0);
  for (std::int64_t s = 0; s < steps; ++s) {
    CAPTURE(s);
    const auto r = request(generation, s);
    REQUIRE(r);
    CHECK(r->plan.job == job);
    CHECK(r->plan.generation == generation);
    CHECK(r->plan.step == s);
    CHECK(r->plan.data_epoch == 0);
    REQUIRE(r->indices);
    // Full batches, and a shorter last one holding the rest of the pass.
    const auto want = s + 1 < steps ? batch : static_cast<std::int64_t>(train_n) - s * batch;
    CHECK(static_cast<std::int64_t>(r->indices->size()) == want);
    CHECK(sum(r->plan.counts) == want);
    for (auto i : *r->indices) {
      REQUIRE(i >= 0);
      REQUIRE(static_cast<std::size_t>(i) < train_n);
      ++seen[static_cast<std::size_t>(i)];
    }
  }
  for (std::size_t i = 0; i < train_n; ++i) {
    CAPTURE(i);
    REQUIRE(seen[i] == 1);
  }
  // The next step begins the second pass.
  const auto next = request(generation, steps);
  REQUIRE(next);
  CHECK(next->plan.data_epoch == 1);
  CHECK(static_cast<std::int64_t>(next->indices->size()) == batch);
}

TEST_CASE_FIXTURE(fixture, "each step is cut by the split weights, and a new split applies next") {
  split(generation, {2, 1, 1});
  auto r = request(generation, 0);
  REQUIRE(r);
  CHECK(r->plan.counts == std::vector<std::int64_t>{32, 16, 16});
  split(generation, {1, 0, 3});
  r = request(generation, 1);
  REQUIRE(r);
  CHECK(r->plan.counts == std::vector<std::int64_t>{16, 0, 48});
  // The same step asked again gets the same indices (the plan is a function of the step).
  const auto again = request(generation, 1);
  REQUIRE(again);
  CHECK(*again->indices == *r->indices);
}

TEST_CASE_FIXTURE(fixture, "a plan is sent only once a split is known") {
  CHECK_FALSE(request(generation, 0));
  split(generation, {1, 1, 1});
  CHECK(request(generation, 0));
}

TEST_CASE_FIXTURE(fixture,
                  "messages of an older generation are dropped; a newer generation is followed") {
  split(generation, {1, 1, 1});
  CHECK_FALSE(request(generation - 1, 0));  // a stale plan_request: no answer
  split(generation - 1, {1, 0, 0});         // a stale split: ignored
  auto r = request(generation, 0);
  REQUIRE(r);
  CHECK(r->plan.counts == std::vector<std::int64_t>{22, 21, 21});
  // The membership moved on: the distributor follows the newer generation, and the old one is
  // stale.
  split(generation + 1, {0, 1, 1});
  r = request(generation + 1, 2);
  REQUIRE(r);
  CHECK(r->plan.generation == generation + 1);
  CHECK(r->plan.counts == std::vector<std::int64_t>{0, 32, 32});
  CHECK_FALSE(request(generation, 3));
}
