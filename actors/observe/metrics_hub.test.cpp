#include "actors/observe/metrics_hub.hpp"

#include <doctest/doctest.h>

using namespace troupe;

TEST_CASE("to_live: every field of a step's metrics reaches the subscribers' view") {
  // job, generation, name, step, steps_total, data_epoch, epochs, loss, samples, step_seconds,
  // samples_per_second, elapsed_seconds, groups, group_samples, worker_compute_seconds,
  // worker_samples, imbalance_index, noise_scale.
  const msg::step_metrics m{
      1,        1,          "j",      7,   90,  2, 3, 0.5, 64, 0.25, 1200.0, 4.0, {"cpu", "sim"},
      {40, 24}, {0.2, 0.1}, {40, 24}, 0.3, 64.0};
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
