// The step trace's phases tile each step: given the job's edges, the workers' compute stamps and
// the shards' seconds, every phase is the difference it is defined as, the critical worker is the
// one that ended last, and a step whose membership changed is left out.
#include "actors/observe/step_trace.hpp"

#include <doctest/doctest.h>

using namespace troupe;
using namespace troupe::actors;

namespace {

steady::time_point at_us(std::int64_t us) {
  return steady::time_point(std::chrono::microseconds(us));
}
std::int64_t ns_us(std::int64_t us) {
  return us * 1000;
}

// One step from `t` (us): two workers, the second one ends last; 2 shards.
void one_step(step_trace& tr, std::int64_t t) {
  tr.begin(at_us(t));
  tr.worker_done(ns_us(t + 20), ns_us(t + 1020));  // 1000 us of compute
  tr.worker_done(ns_us(t + 50), ns_us(t + 1250));  // 1200 us: the slowest and the last
  tr.all_done(at_us(t + 1300));
  tr.applied(40e-6, 60e-6);
  tr.applied(70e-6, 30e-6);
  tr.all_applied(at_us(t + 1500));
  tr.boundary(at_us(t + 1540));
}

}  // namespace

TEST_CASE("phases tile the step between two begins") {
  step_trace tr;
  one_step(tr, 0);
  one_step(tr, 1600);  // closes the first at 1600: plan 60 us
  tr.finish();         // the second closes at its boundary: plan 0
  REQUIRE(tr.traced() == 2);
  step_trace first_only;
  one_step(first_only, 0);
  first_only.begin(at_us(1600));
  const auto m = first_only.medians();
  REQUIRE(m.steps == 1);
  auto us = [&](step_phase p) { return m[p] * 1e6; };
  CHECK(us(step_phase::plan) == doctest::Approx(60));
  CHECK(us(step_phase::dispatch) == doctest::Approx(50));
  CHECK(us(step_phase::compute) == doctest::Approx(1200));
  CHECK(us(step_phase::collect) == doctest::Approx(50));
  CHECK(us(step_phase::sum) == doctest::Approx(70));
  CHECK(us(step_phase::apply) == doctest::Approx(60));
  CHECK(us(step_phase::exchange) == doctest::Approx(200 - 70 - 60));
  CHECK(us(step_phase::stats) == doctest::Approx(40));
  CHECK(us(step_phase::step) == doctest::Approx(1600));
  CHECK(us(step_phase::fixed) == doctest::Approx(400));
  double tiled = 0.0;
  for (auto p : {step_phase::plan, step_phase::dispatch, step_phase::compute, step_phase::collect,
                 step_phase::sum, step_phase::apply, step_phase::exchange, step_phase::stats})
    tiled += us(p);
  CHECK(tiled == doctest::Approx(us(step_phase::step)));
}

TEST_CASE("a voided step and a worker without stamps are left out") {
  step_trace tr;
  one_step(tr, 0);
  tr.void_step();
  tr.begin(at_us(2000));
  tr.worker_done(0, 0);  // not stamped
  tr.all_done(at_us(2100));
  tr.all_applied(at_us(2200));
  tr.boundary(at_us(2300));
  tr.finish();
  CHECK(tr.traced() == 0);
  CHECK(tr.medians().steps == 0);
}

TEST_CASE("medians are per phase over the window's last steps") {
  step_trace tr(3);
  // Step k's plan wait is 10 * k us; the window keeps the last three of five.
  std::int64_t t = 0;
  for (int k = 0; k < 5; ++k) {
    one_step(tr, t);
    t += 1540 + 10 * (k + 1);
  }
  tr.begin(at_us(t));
  REQUIRE(tr.traced() == 3);
  CHECK(tr.medians()[step_phase::plan] * 1e6 == doctest::Approx(40));  // of 30, 40, 50
  CHECK(phase_line(tr.medians()).rfind("plan 40 dispatch 50 compute 1200", 0) == 0);
}
