#include "policies/supervision.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "core/error.hpp"

using namespace troupe::policies;

TEST_CASE("failure classes and policies: names both ways, defaults") {
  struct row {
    failure_class c;
    const char* name;
    failure_policy def;
  };
  const row table[] = {
      {failure_class::crash, "crash", failure_policy::restart},
      {failure_class::hang, "hang", failure_policy::restart},
      {failure_class::device_error, "device-error", failure_policy::migrate},
      {failure_class::out_of_memory, "out-of-memory", failure_policy::migrate},
      {failure_class::lost_group, "lost-group", failure_policy::migrate},
  };
  CHECK(troupe::all_values<failure_class>().size() == std::size(table));
  const policy_table defaults;
  for (const auto& r : table) {
    CAPTURE(r.name);
    CHECK(std::string(troupe::name_of(r.c)) == r.name);
    CHECK(troupe::parse_name<failure_class>(r.name) == r.c);
    CHECK(default_policy(r.c) == r.def);
    CHECK(defaults[r.c] == r.def);
  }
  // The config spells it with '-'.
  CHECK_FALSE(troupe::parse_name<failure_class>("device_error").has_value());
  CHECK_FALSE(troupe::parse_name<failure_class>("").has_value());
  for (const char* p : {"restart", "migrate", "fail-job"})
    CHECK(std::string(troupe::name_of(*troupe::parse_name<failure_policy>(p))) == p);
  CHECK_FALSE(troupe::parse_name<failure_policy>("fail_job").has_value());
}

TEST_CASE("policy_table: the config's overrides, defaults for the rest") {
  const policy_table t({{failure_class::crash, failure_policy::fail_job},
                        {failure_class::lost_group, failure_policy::restart}});
  CHECK(t[failure_class::crash] == failure_policy::fail_job);
  CHECK(t[failure_class::lost_group] == failure_policy::restart);
  CHECK(t[failure_class::hang] == failure_policy::restart);          // default
  CHECK(t[failure_class::device_error] == failure_policy::migrate);  // default
}

TEST_CASE("classify_message") {
  struct row {
    const char* what;
    failure_class want;
  };
  const row table[] = {
      {"CUDA error: out of memory (cudaErrorMemoryAllocation)", failure_class::out_of_memory},
      {"std::bad_alloc", failure_class::out_of_memory},
      {"mmap: Cannot allocate memory", failure_class::out_of_memory},
      {"CUBLAS_STATUS_ALLOC_FAILED", failure_class::out_of_memory},
      {"CUDA error: an illegal memory access was encountered", failure_class::device_error},
      {"NCCL WARN Net : Connection closed", failure_class::device_error},
      {"sim device 2: injected fault", failure_class::device_error},
      {"worker 3 exited", failure_class::crash},
      {"no room to zoom", failure_class::crash},  // no accidental "oom"
      {"", failure_class::crash},
  };
  for (const auto& r : table) {
    CAPTURE(r.what);
    CHECK(classify_message(r.what) == r.want);
  }
}

TEST_CASE("backoff: exponential, capped, jitter only shortens") {
  const backoff_params b{0.05, 2.0, 1.0, 0.0};
  troupe::rng r(1);
  const double want[] = {0.05, 0.1, 0.2, 0.4, 0.8, 1.0, 1.0};
  for (int k = 0; k < 7; ++k) CHECK(backoff_seconds(k, b, r) == doctest::Approx(want[k]));
  CHECK(backoff_seconds(5000, b, r) == 1.0);  // factor^k overflows; the cap still holds
  CHECK(backoff_seconds(-3, b, r) == doctest::Approx(0.05));

  const backoff_params j{0.05, 2.0, 1.0, 0.25};
  troupe::rng a(7), a2(7);
  double lo = 1e9, hi = 0;
  for (int i = 0; i < 2000; ++i) {
    const double d = backoff_seconds(3, j, a);
    CHECK(d == backoff_seconds(3, j, a2));  // same stream, same waits
    lo = std::min(lo, d);
    hi = std::max(hi, d);
  }
  CHECK(lo >= 0.4 * 0.75);
  CHECK(hi <= 0.4);
  CHECK(hi - lo > 0.09);  // the jitter is really there: spread close to 0.1

  for (const backoff_params bad : {backoff_params{-1, 2, 1, 0}, backoff_params{0.1, 0.5, 1, 0},
                                   backoff_params{0.1, 2, 0.05, 0}, backoff_params{0.1, 2, 1, 1.5},
                                   backoff_params{NAN, 2, 1, 0}})
    CHECK_THROWS_AS(validate(bad), troupe::input_error);
}

TEST_CASE("restart intensity: at most R restarts in any T-second window") {
  restart_intensity ri({3, 10.0});
  // time -> decision, one failure per row.
  struct row {
    double t;
    restart_decision want;
    int in_window_after;
  };
  const row table[] = {
      {0.0, restart_decision::restart, 1},   {1.0, restart_decision::restart, 2},
      {2.0, restart_decision::restart, 3},   {3.0, restart_decision::escalate, 3},
      {9.9, restart_decision::escalate, 3},  // the 0.0 restart is still inside (0.0 > 9.9 - 10)
      {10.0, restart_decision::restart, 3},  // (0, 10]: the 0.0 one has left the window
      {10.5, restart_decision::escalate, 3}, {11.0, restart_decision::restart, 3},
      {40.0, restart_decision::restart, 1},  // a quiet period resets everything
  };
  for (const auto& r : table) {
    CAPTURE(r.t);
    CHECK(ri.on_failure(r.t) == r.want);
    CHECK(ri.restarts_in_window(r.t) == r.in_window_after);
  }
  // R = 0: never restart.
  restart_intensity never({0, 10.0});
  CHECK(never.on_failure(0) == restart_decision::escalate);
  CHECK_THROWS_AS(restart_intensity({-1, 10.0}), troupe::input_error);
  CHECK_THROWS_AS(restart_intensity({3, 0.0}), troupe::input_error);
}

TEST_CASE("decide: policy table, then intensity, then backoff") {
  const backoff_params b{0.1, 2.0, 10.0, 0.0};
  troupe::rng r(3);

  SUBCASE("restart classes restart with growing backoff until the intensity escalates") {
    policy_table t;
    restart_intensity ri({2, 60.0});
    auto d = decide(failure_class::crash, t, ri, 0.0, b, r);
    CHECK(d.action == supervisor_action::restart);
    CHECK(d.backoff_seconds == doctest::Approx(0.1));
    CHECK_FALSE(d.escalated);
    CHECK(d.reason == "crash: restart 1 of 2 in the window");
    // A hang counts against the same worker's budget.
    d = decide(failure_class::hang, t, ri, 1.0, b, r);
    CHECK(d.action == supervisor_action::restart);
    CHECK(d.backoff_seconds == doctest::Approx(0.2));
    d = decide(failure_class::crash, t, ri, 2.0, b, r);
    CHECK(d.action == supervisor_action::migrate);
    CHECK(d.escalated);
    CHECK(d.backoff_seconds == 0.0);
    CHECK(d.reason ==
          "crash: 2 restarts in the last 60 s reached the limit 2; escalating to migrate");
  }
  SUBCASE("migrate and fail-job classes do not touch the restart budget") {
    const policy_table t({{failure_class::crash, failure_policy::fail_job}});
    restart_intensity ri({1, 60.0});
    auto d = decide(failure_class::device_error, t, ri, 0.0, b, r);
    CHECK(d.action == supervisor_action::migrate);
    CHECK_FALSE(d.escalated);
    CHECK(d.reason == "device-error: policy migrate");
    d = decide(failure_class::crash, t, ri, 0.0, b, r);
    CHECK(d.action == supervisor_action::fail_job);
    CHECK(std::string(troupe::name_of(d.action)) == "fail-job");
    CHECK(ri.restarts_in_window(0.0) == 0);
    d = decide(failure_class::hang, t, ri, 0.0, b, r);  // budget intact: hang still restarts
    CHECK(d.action == supervisor_action::restart);
  }
}

TEST_CASE("hang deadline: initial, floor, multiple of the nearest-rank p95 over a window") {
  deadline_params p;
  p.floor_seconds = 0.5;
  p.multiple = 4.0;
  p.percentile = 0.95;
  p.window = 20;
  p.min_samples = 5;
  p.initial_seconds = 30.0;
  step_deadline d(p);
  CHECK(d.deadline() == 30.0);  // no samples
  for (int i = 0; i < 4; ++i) d.observe(0.01);
  CHECK(d.deadline() == 30.0);  // still fewer than min_samples
  d.observe(0.01);
  CHECK(d.deadline() == 0.5);  // 4 x 0.01 is below the floor

  // Twenty samples 1..20 (x 0.1 s): nearest-rank p95 = ceil(0.95 * 20) = 19th smallest = 1.9 s.
  for (int i = 1; i <= 20; ++i) d.observe(0.1 * i);
  CHECK(d.samples() == 20);
  CHECK(d.high_percentile() == doctest::Approx(1.9));
  CHECK(d.deadline() == doctest::Approx(7.6));

  // One outlier in the window does not move p95 of 20 samples past the 19th value...
  d.observe(100.0);  // window slides: drops 0.1, adds 100
  CHECK(d.high_percentile() == doctest::Approx(2.0));
  // ...and old samples leave the window: 20 fast steps bring it back down.
  for (int i = 0; i < 20; ++i) d.observe(0.2);
  CHECK(d.high_percentile() == doctest::Approx(0.2));
  CHECK(d.deadline() == doctest::Approx(0.8));

  // Garbage is ignored, not averaged in.
  d.observe(-1.0);
  d.observe(NAN);
  d.observe(INFINITY);
  CHECK(d.samples() == 20);
  CHECK(d.deadline() == doctest::Approx(0.8));
}

TEST_CASE("hang deadline: percentile edge cases and parameter checks") {
  deadline_params p;
  p.window = 3;
  p.min_samples = 1;
  p.percentile = 1.0;  // the maximum
  step_deadline d(p);
  CHECK(d.high_percentile() == 0.0);
  d.observe(3);
  d.observe(1);
  d.observe(2);
  CHECK(d.high_percentile() == 3);
  p.percentile = 0.01;  // the minimum (rank 1)
  step_deadline low(p);
  for (double v : {3.0, 1.0, 2.0}) low.observe(v);
  CHECK(low.high_percentile() == 1);

  for (auto bad :
       {deadline_params{-1, 4, 0.95, 50, 5, 30}, deadline_params{0.5, 0.5, 0.95, 50, 5, 30},
        deadline_params{0.5, 4, 0.0, 50, 5, 30}, deadline_params{0.5, 4, 1.5, 50, 5, 30},
        deadline_params{0.5, 4, 0.95, 0, 0, 30}, deadline_params{0.5, 4, 0.95, 5, 6, 30},
        deadline_params{0.5, 4, 0.95, 50, 5, -1}})
    CHECK_THROWS_AS(step_deadline{bad}, troupe::input_error);
}
