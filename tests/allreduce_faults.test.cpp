// `sync: allreduce` losing a member. While a step computes, the survivors compute its slices and
// contribute them at the reduction (each member the sum of the slices it computed). While the
// members reduce, the job hears from every survivor whether it applied the step: when one did,
// the others take its replica; when none did, the step runs again over the survivors. Either way
// no step is lost and the run trains the model the fault-free run trains, bit for bit (the
// canonical reduction of deterministic mode), whether the lost worker
// is restarted (it rejoins at a step boundary with a member's replica and optimizer state) or
// migrated away. The end-of-run replica check is part of `completed`.
#include <doctest/doctest.h>

#include <string>

#include "tests/run_support.hpp"

namespace {

using troupe::testing::check_failures;
using troupe::testing::relative_l2;

troupe::job_report run(const std::string& faults) {
  return troupe::testing::run_one(
      troupe::testing::small_mlp_config("arf", troupe::testing::three_workers,
                                        "{kind: adam, lr: 0.01}", "{mode: allreduce}", 50, faults),
      "allreduce_faults.yaml", 50);
}

const troupe::job_report& baseline() {
  static const troupe::job_report r = run("");
  return r;
}

void check_same_model(const troupe::job_report& r) {
  INFO("events:" << troupe::testing::events_text(r));  // what happened, when a check fails
  CHECK(r.faults.lost_steps == 0);
  const double rel = relative_l2(*r.final_params, *baseline().final_params);
  MESSAGE("relative L2 to the run without faults: " << rel);
  CHECK(rel < 1e-5);
  // Deterministic, every replica here: the canonical reduction adds the same block sums in the
  // same order however the lost member's slices were shared out, so the bits are the same.
  CHECK(r.params.fnv1a64 == baseline().params.fnv1a64);
  std::int64_t samples = 0;
  for (const auto& w : r.workers) samples += w.samples;
  // Every sample of every step, once: 2000 training samples in steps of 96 are 20 full steps and
  // one of 80 a pass, so 50 steps cross two pass ends.
  CHECK(samples == 48 * 96 + 2 * 80);
  troupe::testing::check_each_sample_once(r, 2);
}

// A worker killed by `fault` (a faults[] entry) and migrated away: it counts `steps` steps.
troupe::job_report migrated(const std::string& fault, std::size_t worker, std::int64_t steps) {
  const auto r = run("      - " + fault + "\n    supervision: {crash: migrate}\n");
  check_failures(r, 1, {{"crash", 1}});
  CHECK(r.faults.migrations == 1);
  CHECK(r.workers[worker].steps == steps);
  check_same_model(r);
  return r;
}

// A worker killed by `fault` (a faults[] entry) and restarted (the default for a crash).
troupe::job_report restarted(const std::string& fault) {
  const auto r = run("      - " + fault + "\n");
  check_failures(r, 1, {{"crash", 1}});
  CHECK(r.faults.restarts >= 1);
  check_same_model(r);
  return r;
}

}  // namespace

TEST_CASE("allreduce: a worker killed mid-run is restarted, and the model is the fault-free one") {
  REQUIRE(baseline().faults.failures == 0);
  CHECK(restarted("{step: 20, action: kill, target: cpu/1}").workers[1].steps >= 20);
}

TEST_CASE("allreduce: a worker migrated away mid-run leaves the others the same model") {
  migrated("{step: 20, action: kill, target: slow/0}", 2, 20);  // steps 0-19, then gone
}

TEST_CASE("allreduce: rank 0 migrated away: the job's copy of the parameters follows the members") {
  // Rank 0's replica is what evaluation, checkpoints and the report read.
  const auto r = migrated("{step: 10, action: kill, target: cpu/0}", 0, 10);
  CHECK(r.test_loss == doctest::Approx(baseline().test_loss).epsilon(1e-4));
}

TEST_CASE("allreduce: a worker killed as the reduction reaches it: the step runs again") {
  // It never contributes, so nobody can complete the reduction: every survivor drops it.
  restarted("{step: 20, action: kill, target: cpu/1, phase: reduce}");
}

TEST_CASE("allreduce: a worker killed after the reduction, before it applies: the others did") {
  // Steps 0-20 computed; step 20 counts, since the others applied its reduction.
  migrated("{step: 20, action: kill, target: slow/0, phase: apply}", 2, 21);
}

TEST_CASE("allreduce: every member killed after the reduction: the step counts once") {
  // The members here share one replica, which the reduction applied before the kills; no member
  // lives to say so, and running the step again would apply it twice.
  const auto r =
      run("      - {step: 20, action: kill, target: cpu/0, phase: apply}\n"
          "      - {step: 20, action: kill, target: cpu/1, phase: apply}\n"
          "      - {step: 20, action: kill, target: slow/0, phase: apply}\n");
  check_failures(r, 3, {{"crash", 3}});
  check_same_model(r);
}

TEST_CASE("allreduce: rank 0 killed as the reduction reaches it, restarted") {
  const auto r = restarted("{step: 30, action: kill, target: cpu/0, phase: reduce}");
  CHECK(r.test_loss == doctest::Approx(baseline().test_loss).epsilon(1e-4));
}
