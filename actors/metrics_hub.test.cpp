#include "actors/metrics_hub.hpp"

#include <doctest/doctest.h>

using namespace troupe;

TEST_CASE("to_live: every field of a step's metrics reaches the subscribers' view") {
  msg::step_metrics m;
  m.name = "j";
  m.step = 7;
  m.steps_total = 90;
  m.data_epoch = 2;
  m.epochs = 3;
  m.loss = 0.5;
  m.samples_per_second = 1200.0;
  m.step_seconds = 0.25;
  m.elapsed_seconds = 4.0;
  m.groups = {"cpu", "sim"};
  m.group_samples = {40, 24};
  m.worker_compute_seconds = {0.2, 0.1};
  m.worker_samples = {40, 24};
  m.imbalance_index = 0.3;
  m.noise_scale = 64.0;
  const auto l = actors::to_live(m);
  CHECK(l.job == "j");
  CHECK(l.step == 7);
  CHECK(l.steps_total == 90);
  CHECK(l.epoch == 2);
  CHECK(l.epochs == 3);
  CHECK(l.loss == 0.5);
  CHECK(l.samples_per_second == 1200.0);
  CHECK(l.step_seconds == 0.25);
  CHECK(l.elapsed_seconds == 4.0);
  REQUIRE(l.split.size() == 2);
  CHECK(l.split[1].first == "sim");
  CHECK(l.split[1].second == 24);
  CHECK(l.imbalance_index == 0.3);
  CHECK(l.noise_scale == 64.0);
  CHECK(l.worker_samples == std::vector<std::int64_t>{40, 24});
  CHECK(l.worker_compute_seconds == std::vector<double>{0.2, 0.1});
}
