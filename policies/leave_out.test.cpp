#include "policies/leave_out.hpp"

#include <doctest/doctest.h>

#include "core/error.hpp"

using namespace troupe::policies;
using act = leave_out_trial::action;

namespace {

// Drives a trial over ranks {gpu, cpu0, cpu1}: `with` samples/s while everyone is in, `without`
// once the candidates are out. The GPU computes 980 of 1000 samples a step.
struct drive {
  leave_out_trial t;
  std::vector<act> actions;
  std::int64_t step = 0;
  explicit drive(leave_out_options o) : t(o, 3) {}
  void steps(int n, double sps, bool out) {
    for (int i = 0; i < n; ++i, ++step) {
      const std::vector<std::int64_t> s =
          out ? std::vector<std::int64_t>{1000, 0, 0} : std::vector<std::int64_t>{980, 12, 8};
      const double seconds = 1000.0 / sps;
      const auto a = t.on_step(step, seconds, s);
      if (a != act::none) actions.push_back(a);
    }
  }
};

leave_out_options small() {
  leave_out_options o;
  o.first_step = 3;
  o.window = 4;
  return o;
}

}  // namespace

TEST_CASE("slow members that cost more than they add are left out") {
  drive d(small());
  d.steps(2, 100.0, false);  // before first_step: nothing measured
  CHECK(d.actions.empty());
  d.steps(5, 450.0, false);  // one more before first_step, then the window with everyone
  REQUIRE(d.actions == std::vector<act>{act::set_aside});
  CHECK(d.t.candidates() == std::vector<std::int32_t>{1, 2});
  d.steps(1, 50.0, true);  // the step that pays for the change is not measured
  d.steps(4, 560.0, true);
  CHECK(d.actions.size() == 1);  // they stay out
  REQUIRE(d.t.verdict());
  const auto& v = *d.t.verdict();
  CHECK(v.left_out);
  CHECK(v.with_sps == doctest::Approx(450.0));
  CHECK(v.without_sps == doctest::Approx(560.0));
  CHECK(v.share == doctest::Approx(0.02));
  CHECK(describe(v, {"gpu/0", "cpu/0", "cpu/1"}) ==
        "left out cpu/0 cpu/1: 560 samples/s without them against 450 with them (medians of 4 "
        "steps); they computed 2.0% of the samples");
  d.steps(20, 100.0, true);  // once decided, never again
  CHECK(d.actions.size() == 1);
}

TEST_CASE("members that add more than they cost are brought back") {
  drive d(small());
  d.steps(7, 500.0, false);
  REQUIRE(d.actions == std::vector<act>{act::set_aside});
  d.steps(5, 480.0, true);
  CHECK(d.actions == std::vector<act>{act::set_aside, act::bring_back});
  REQUIRE(d.t.verdict());
  CHECK_FALSE(d.t.verdict()->left_out);
  CHECK(describe(*d.t.verdict(), {"gpu/0", "cpu/0", "cpu/1"}).rfind("kept cpu/0 cpu/1: 480", 0) ==
        0);
}

TEST_CASE("no candidate, or nobody else left: no trial") {
  leave_out_trial even(small(), 2);
  for (std::int64_t s = 0; s < 20; ++s) CHECK(even.on_step(s, 1.0, {500, 500}) == act::none);
  CHECK(even.candidates().empty());
  CHECK_FALSE(even.verdict());
  // Every member under the share (many equal members): leaving all out is no arrangement.
  leave_out_options o = small();
  o.max_share = 0.5;
  leave_out_trial all(o, 3);
  for (std::int64_t s = 0; s < 20; ++s) CHECK(all.on_step(s, 1.0, {300, 300, 300}) == act::none);
  CHECK_FALSE(all.verdict());
}

TEST_CASE("a failure abandons the trial and brings the candidates back") {
  drive d(small());
  d.steps(7, 500.0, false);
  REQUIRE(d.actions == std::vector<act>{act::set_aside});
  CHECK(d.t.abandon() == act::bring_back);
  CHECK_FALSE(d.t.verdict());
  CHECK(d.t.abandon() == act::none);
  d.steps(10, 900.0, true);
  CHECK(d.actions.size() == 1);
}

TEST_CASE("bad options are refused") {
  leave_out_options o;
  o.window = 1;
  CHECK_THROWS_AS(leave_out_trial(o, 2), troupe::input_error);
  o = leave_out_options{};
  o.max_share = 1.0;
  CHECK_THROWS_AS(leave_out_trial(o, 2), troupe::input_error);
  o = leave_out_options{};
  o.min_gain = -0.1;
  CHECK_THROWS_AS(leave_out_trial(o, 2), troupe::input_error);
}
