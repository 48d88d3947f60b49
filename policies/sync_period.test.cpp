#include "policies/sync_period.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/error.hpp"

using namespace troupe::policies;

TEST_CASE("initial period from the communication/compute ratio: table") {
  struct row {
    double comm, compute;
    int want;
  };
  // tau_0 = ceil(4 sqrt(comm / compute)), clamped to [1, 64].
  const row table[] = {
      {0.0, 1.0, 1},    {0.01, 1.0, 1},  // compute bound: synchronous
      {1.0, 16.0, 1},   {0.25, 1.0, 2},    {1.0, 1.0, 4}, {1.0, 0.25, 8}, {2.0, 1.0, 6},  // 5.66
      {100.0, 1.0, 40}, {1000.0, 1.0, 64},                                                // clamped
  };
  for (const auto& r : table) {
    CAPTURE(r.comm);
    CAPTURE(r.compute);
    CHECK(initial_sync_period(r.comm, r.compute) == r.want);
  }
  sync_period_options o;
  o.kappa = 1.0;
  o.tau_max = 8;
  CHECK(initial_sync_period(9.0, 1.0, o) == 3);
  CHECK(initial_sync_period(100.0, 1.0, o) == 8);
}

TEST_CASE("AdaComm schedule: table") {
  struct row {
    double loss, loss0, lr, lr0;
    int tau0;
    double power;
    int want;
  };
  const row table[] = {
      {2.0, 2.0, 0.1, 0.1, 10, 3, 10},    // nothing changed
      {0.5, 2.0, 0.1, 0.1, 10, 3, 5},     // sqrt(1/4) * 10, exactly 5 (no rounding up to 6)
      {1.0, 2.0, 0.1, 0.1, 10, 3, 8},     // 7.07
      {0.02, 2.0, 0.1, 0.1, 10, 3, 1},    // sqrt(0.01) * 10 = 1
      {0.0, 2.0, 0.1, 0.1, 10, 3, 1},     // never below 1
      {2.0, 2.0, 0.05, 0.1, 10, 3, 29},   // lr halved: sqrt(8) * 10 = 28.3
      {0.25, 2.0, 0.05, 0.1, 10, 3, 10},  // sqrt(1/8 * 8)
      {2.0, 2.0, 0.05, 0.1, 10, 0, 10},   // p = 0: the learning rate is ignored
      {2.0, 2.0, 0.05, 0.1, 10, 1, 15},   // sqrt(2) * 10 = 14.1
      {2.0, 2.0, 0.001, 0.1, 10, 3, 64},  // clamped at tau_max
  };
  for (const auto& r : table) {
    sync_period_options o;
    o.lr_power = r.power;
    CAPTURE(r.loss);
    CAPTURE(r.lr);
    CHECK(adacomm_period(r.loss, r.loss0, r.lr, r.lr0, r.tau0, o) == r.want);
  }
  sync_period_options floor;
  floor.loss_floor = 1.0;  // (1.25 - 1) / (2 - 1) = 1/4
  CHECK(adacomm_period(1.25, 2.0, 0.1, 0.1, 10, floor) == 5);
  CHECK(adacomm_period(0.5, 2.0, 0.1, 0.1, 10, floor) == 1);  // below the floor
}

TEST_CASE("AdaComm: invalid input") {
  CHECK_THROWS_AS(initial_sync_period(1.0, 0.0), troupe::input_error);
  CHECK_THROWS_AS(initial_sync_period(-1.0, 1.0), troupe::input_error);
  CHECK_THROWS_AS(adacomm_period(1, 1, 0, 0.1, 4), troupe::input_error);
  CHECK_THROWS_AS(adacomm_period(1, 0, 0.1, 0.1, 4), troupe::input_error);
  CHECK_THROWS_AS(adacomm_period(1, 1, 0.1, 0.1, 0), troupe::input_error);
  CHECK_THROWS_AS(adacomm_period(NAN, 1, 0.1, 0.1, 4), troupe::input_error);
  sync_period_options bad;
  bad.tau_max = 0;
  CHECK_THROWS_AS(initial_sync_period(1, 1, bad), troupe::input_error);
}

TEST_CASE("sync_tuner: the period falls with the loss, ignores noise bumps, rises on lr decay") {
  sync_period_options o;
  o.loss_smoothing = 0.0;          // raw loss: the table below is exact
  sync_tuner t{4.0, 1.0, 0.1, o};  // r = 4: tau_0 = 8
  CHECK(t.initial_period() == 8);
  CHECK(t.decide(0.1).reason.rfind("hold", 0) == 0);  // no loss yet
  struct row {
    double loss, lr;
    int want;
    bool changed;
  };
  const row table[] = {
      {2.0, 0.1, 8, false},    // F_0
      {0.5, 0.1, 4, true},     // sqrt(1/4) * 8
      {0.9, 0.1, 4, false},    // the loss rose: not undone at the same lr
      {0.125, 0.1, 2, true},   // sqrt(1/16) * 8
      {0.125, 0.05, 6, true},  // lr halved: sqrt(1/16 * 8) * 8 = 5.66
      {0.03, 0.05, 3, true},   // sqrt(0.015 * 8) * 8 = 2.77
  };
  for (const auto& r : table) {
    t.observe_loss(r.loss);
    const auto d = t.decide(r.lr);
    CAPTURE(r.loss);
    CHECK(d.period == r.want);
    CHECK(d.changed == r.changed);
    CHECK(t.period() == r.want);
  }
}

TEST_CASE("sync_tuner: the loss EMA damps a single noisy step") {
  sync_period_options o;           // smoothing 0.9
  sync_tuner t{1.0, 1.0, 0.1, o};  // tau_0 = 4
  for (int i = 0; i < 50; ++i) t.observe_loss(1.0);
  t.observe_loss(0.01);  // one lucky batch
  // EMA ~ 0.9 * 1 + 0.1 * 0.01 = 0.90: sqrt(0.9) * 4 = 3.8 -> 4, not sqrt(0.01) * 4 -> 1.
  CHECK(*t.smoothed_loss() == doctest::Approx(0.901).epsilon(0.01));
  CHECK(t.decide(0.1).period == 4);
}
