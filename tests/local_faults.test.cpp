// `sync: local` losing a member. The job owns every rank's replica and optimizer state, so what
// a lost member trained since the last average is not lost: it joins the next average (folded
// in by member 0, weighted by its samples). Its unfinished slices are computed by the survivors;
// lost while the members apply, the job applies a lost member's local step from its gradient,
// and an average nobody completed runs again. No step and no sample is lost.
//
// With period 1 and plain SGD, local SGD is gradient averaging, so a run with a fault trains the
// model of the run without it (up to float summation order). With a longer period the replicas
// between averages depend on who trained what, so the model is local SGD's over the survivors:
// close to the fault-free one, not equal.
#include <doctest/doctest.h>

#include <string>

#include "tests/run_support.hpp"

namespace {

using troupe::testing::relative_l2;

troupe::job_report run(const std::string& optimizer, const std::string& sync,
                       const std::string& faults) {
  return troupe::testing::run_one(
      troupe::testing::small_mlp_config("lf", troupe::testing::three_workers, optimizer, sync, 40,
                                        faults),
      "local_faults.yaml", 40);
}

const std::string sgd = "{kind: sgd, lr: 0.05}";
const std::string period_1 = "{mode: local, period: 1}";
const std::string period_4 = "{mode: local, period: 4}";

// Every sample of every step trained once: 2000 training samples in steps of 96 are 20 full
// steps and one of 80 a pass, so 40 steps are 39 full ones and 1 of 80.
void check_no_loss(const troupe::job_report& r) {
  CHECK(r.faults.lost_steps == 0);
  std::int64_t samples = 0;
  for (const auto& w : r.workers) samples += w.samples;
  CHECK(samples == 39 * 96 + 80);
  troupe::testing::check_each_sample_once(r, 1);
}

}  // namespace

TEST_CASE("local SGD, period 1: a worker lost at any phase of a step leaves the model unchanged") {
  const auto clean = run(sgd, period_1, "");
  REQUIRE(clean.faults.failures == 0);
  for (const std::string phase : {"compute", "reduce", "apply"})
    for (const std::string policy : {"restart", "migrate"}) {
      CAPTURE(phase);
      CAPTURE(policy);
      const auto r = run(sgd, period_1,
                         "      - {step: 15, action: kill, target: cpu/1, phase: " + phase +
                             "}\n    supervision: {crash: " + policy + "}\n");
      CHECK(r.faults.injected == 1);
      CHECK(r.faults.failures_by_class.at("crash") == 1);
      check_no_loss(r);
      const double d = relative_l2(*r.final_params, *clean.final_params);
      CAPTURE(d);
      CHECK(d < 1e-5);
    }
}

TEST_CASE("local SGD, period 4, Adam: a lost worker's training joins the next average") {
  const std::string adam = "{kind: adam, lr: 0.01}";
  const auto clean = run(adam, period_4, "");
  // Killed mid-interval (steps 12-15 average at 15): its local steps 12-13 are folded in.
  for (const std::string phase : {"compute", "reduce", "apply"}) {
    CAPTURE(phase);
    const auto r = run(adam, period_4,
                       "      - {step: 14, action: kill, target: cpu/1, phase: " + phase +
                           "}\n    supervision: {crash: migrate}\n");
    CHECK(r.faults.migrations == 1);
    check_no_loss(r);
    const double d = relative_l2(*r.final_params, *clean.final_params);
    CAPTURE(d);
    CHECK(d > 0);     // two replicas trained its slices after the loss: another model
    CHECK(d < 0.05);  // but local SGD's over the survivors, not a lost interval
    CHECK(r.test_loss == doctest::Approx(clean.test_loss).epsilon(0.05));
  }
  // Killed as the average of step 15 reaches it: nobody completes it, and it runs again.
  const auto avg = run(adam, period_4,
                       "      - {step: 15, action: kill, target: slow/0, phase: reduce}\n"
                       "    supervision: {crash: restart}\n");
  check_no_loss(avg);
  CHECK(avg.faults.restarts >= 1);
  CHECK(relative_l2(*avg.final_params, *clean.final_params) < 0.05);
}
