#include "devices/share_scheduler.hpp"

#include <doctest/doctest.h>

#include <map>

#include "core/error.hpp"
#include "core/rng.hpp"

using troupe::devices::share_scheduler;

namespace {

// Both jobs always backlogged; each grant runs one slice of the job's slice length.
std::map<std::string, double> run_backlogged(share_scheduler& s,
                                             const std::map<std::string, double>& slice,
                                             int grants) {
  for (const auto& [job, _] : slice) s.enqueue(job);
  std::map<std::string, double> used;
  for (int i = 0; i < grants; ++i) {
    const auto job = s.grant();
    REQUIRE(!job.empty());
    s.release(job, slice.at(job));
    used[job] += slice.at(job);
    s.enqueue(job);
  }
  return used;
}

}  // namespace

TEST_CASE("backlogged jobs get compute time in proportion to their weights") {
  struct row {
    double wa, wb, slice_a, slice_b;
  };
  for (const row& r : {row{3, 1, 1.0, 1.0}, row{1, 1, 0.5, 2.0}, row{5, 2, 0.3, 0.1}}) {
    share_scheduler s;
    s.set_weight("a", r.wa);
    s.set_weight("b", r.wb);
    auto used = run_backlogged(s, {{"a", r.slice_a}, {"b", r.slice_b}}, 2000);
    const double ratio = used["a"] / used["b"];
    CHECK(ratio == doctest::Approx(r.wa / r.wb).epsilon(0.02));
  }
}

TEST_CASE("an idle job does not bank credit while away") {
  share_scheduler s;
  s.set_weight("a", 1);
  s.set_weight("b", 1);
  // a runs alone for 100 s of slices.
  for (int i = 0; i < 100; ++i) {
    s.enqueue("a");
    CHECK(s.grant() == "a");
    s.release("a", 1.0);
  }
  // b arrives: it must not now monopolise the device for 100 s.
  auto used = run_backlogged(s, {{"a", 1.0}, {"b", 1.0}}, 40);
  CHECK(used["b"] <= 21.0);
  CHECK(used["a"] >= 19.0);
}

TEST_CASE("grant runs one job at a time and withdraw removes a waiter") {
  share_scheduler s;
  s.enqueue("a");
  s.enqueue("b");
  const auto first = s.grant();
  CHECK(s.busy());
  CHECK(s.grant().empty());  // still held
  s.withdraw(first == "a" ? "b" : "a");
  s.release(first, 0.1);
  CHECK(s.grant().empty());  // nobody waits any more
}

TEST_CASE("weights must be positive") {
  share_scheduler s;
  CHECK_THROWS_AS(s.set_weight("a", 0.0), troupe::input_error);
  CHECK_THROWS_AS(s.set_weight("a", -1.0), troupe::input_error);
}

namespace {

// Jobs that are NOT backlogged: each computes `slice` seconds, then spends `gap` seconds away
// (reducing, applying) before asking again, as a training job does between steps.
std::map<std::string, double> run_with_gaps(share_scheduler& s, double slice, double gap,
                                            double horizon) {
  std::map<std::string, double> ready{{"a", 0.0}, {"b", 0.0}}, used;
  double t = 0.0;
  while (t < horizon) {
    for (const auto& [job, at] : ready)
      if (at <= t && !s.waiting(job) && s.running() != job) s.enqueue(job);
    const auto job = s.grant(t);
    if (!job.empty()) {
      t += slice;
      s.release(job, slice, t);
      used[job] += slice;
      ready[job] = t + gap;
      continue;
    }
    double next = 1e300;
    for (const auto& [j, at] : ready)
      if (!s.waiting(j)) next = std::min(next, at);
    if (s.hold_until() > 0.0) next = std::min(next, s.hold_until());
    t = std::max(t, next);
  }
  return used;
}

}  // namespace

TEST_CASE("jobs with gaps between steps alternate without anticipation, share with it") {
  // Weights 3:1, steps of 1 s with gaps of 0.1 s between a job's steps.
  struct row {
    double anticipation;  // 0: none
    double ratio;         // a's device time over b's
    double epsilon;
  };
  const row table[] = {
      {0.0, 1.0, 0.05},
      {0.2, 3.0, 0.03},
      // A gap longer than the window: the absent job loses its turn, the device is not held.
      {0.05, 1.0, 0.05},
  };
  for (const auto& r : table) {
    CAPTURE(r.anticipation);
    share_scheduler s;
    s.set_weight("a", 3);
    s.set_weight("b", 1);
    if (r.anticipation > 0) s.set_anticipation(r.anticipation);
    auto used = run_with_gaps(s, 1.0, 0.1, 4000);
    CHECK(used["a"] / used["b"] == doctest::Approx(r.ratio).epsilon(r.epsilon));
  }
}
