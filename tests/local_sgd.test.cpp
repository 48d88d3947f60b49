// `sync: local` end to end (actors/sync/local_step.hpp) through the embedded runtime: real actors,
// real data. What the `delay` fault does to step times, and the adaptive period that follows
// measured times, are in local_sgd_timing.test.cpp (`make bench`).
#include <doctest/doctest.h>

#include <string>

#include "actors/runtime.hpp"
#include "core/config_load.hpp"
#include "core/error.hpp"
#include "tests/run_support.hpp"

namespace {

using troupe::testing::relative_l2;

std::string config_text(const std::string& groups, const std::string& optimizer,
                        const std::string& sync, std::int64_t steps,
                        const std::string& faults = "") {
  return troupe::testing::small_mlp_config("local", groups, optimizer, sync, steps, faults);
}

using troupe::testing::three_workers;
const std::string one_worker = "    - {name: cpu, device: cpu, count: 1, threads: 1}\n";

}  // namespace

TEST_CASE("sync: local, period 1, SGD trains the model sync: allreduce trains (3 workers)") {
  const auto opt = "{kind: sgd, lr: 0.05}";
  const auto local = troupe::testing::run_one(
      config_text(three_workers, opt, "{mode: local, period: 1}", 50), "local.yaml", 50);
  const auto ar = troupe::testing::run_one(config_text(three_workers, opt, "{mode: allreduce}", 50),
                                           "allreduce.yaml", 50);
  CHECK(local.train_loss < 1.0);
  const double rel = relative_l2(*local.final_params, *ar.final_params);
  MESSAGE("relative L2 local(period 1) vs allreduce, SGD: " << rel);
  CHECK(rel < 1e-5);
  CHECK(local.sync.mode == troupe::sync_mode::local);
  CHECK(local.sync.rounds == 50);
  CHECK(ar.sync.rounds == 50);
}

TEST_CASE("sync: local with one worker is plain SGD, whatever the period") {
  for (const std::string opt : {"{kind: sgd, lr: 0.05}", "{kind: adam, lr: 0.01}"}) {
    CAPTURE(opt);
    const auto local = troupe::testing::run_one(
        config_text(one_worker, opt, "{mode: local, period: 5}", 30), "local.yaml", 30);
    const auto ps =
        troupe::testing::run_one(config_text(one_worker, opt, "{mode: ps}", 30), "ps.yaml", 30);
    CHECK(relative_l2(*local.final_params, *ps.final_params) < 1e-5);
    CHECK(local.sync.rounds == 6);  // steps 4, 9, ..., 29
  }
}

TEST_CASE("sync: local, period 4: averages every 4th step and the last; replicas agree") {
  const auto local = troupe::testing::run_one(
      config_text(three_workers, "{kind: adam, lr: 0.01}", "{mode: local, period: 4}", 50),
      "local.yaml", 50);
  // `completed` includes the job's check that every replica holds the same bits at the end.
  CHECK(local.sync.period == 4);
  CHECK(local.sync.rounds == 13);  // steps 3, 7, ..., 47 and 49
  CHECK(local.train_loss < 1.0);
  CHECK(local.test_accuracy > 0.5);
}

TEST_CASE("the runtime refuses a bad sync.period from an embedding app, naming the job") {
  auto cfg = troupe::config::parse_config(
      config_text(one_worker, "{kind: sgd, lr: 0.05}", "{mode: local, period: 2}", 5), "ok.yaml");
  cfg.jobs[0].sync.period = 0;
  try {
    troupe::runtime rt(cfg);
    FAIL("no error");
  } catch (const troupe::input_error& e) {
    CHECK(std::string(e.what()).find("job 'local': sync.period") != std::string::npos);
  }
}
