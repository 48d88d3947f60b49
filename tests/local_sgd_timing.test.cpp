// The `delay` fault (actors/common/fault_delay.hpp) and local SGD's adaptive period through the
// embedded runtime, on real clocks. A delayed step is checked against the fault's own length (a
// lower bound the delay guarantees) and the undelayed steps' median against half of it; the
// adaptive period follows measured communication and compute times. These are measurements of a
// shared host, so they run with `make bench`.
// ctest-label: perf
#include <doctest/doctest.h>

#include <mutex>
#include <string>
#include <vector>

#include "actors/runtime.hpp"
#include "core/config_load.hpp"
#include "core/median.hpp"
#include "tests/run_support.hpp"

namespace {

using troupe::median;

std::string config_text(const std::string& groups, const std::string& optimizer,
                        const std::string& sync, std::int64_t steps,
                        const std::string& faults = "") {
  return troupe::testing::small_mlp_config("local", groups, optimizer, sync, steps, faults);
}

const std::string two_workers = "    - {name: cpu, device: cpu, count: 2, threads: 1}\n";

struct timed_run {
  troupe::job_report job;
  std::vector<double> step_seconds;  // by step
};

timed_run run_timed(const std::string& yaml, std::int64_t steps) {
  troupe::runtime_options opts;
  opts.wait_seconds = 120;
  troupe::runtime rt(troupe::config::parse_config(yaml, "local.yaml"), opts);
  std::mutex mu;
  std::vector<double> secs(static_cast<std::size_t>(steps), -1.0);
  rt.on_metrics([&](const troupe::live_metrics& m) {
    std::lock_guard<std::mutex> lock(mu);
    if (m.step >= 1 && m.step <= steps) secs[static_cast<std::size_t>(m.step - 1)] = m.step_seconds;
  });
  auto report = rt.run();
  REQUIRE(report.jobs.size() == 1);
  INFO("error: " << report.jobs[0].error);
  REQUIRE(report.jobs[0].status == troupe::job_status::completed);
  REQUIRE(report.jobs[0].steps == steps);
  std::lock_guard<std::mutex> lock(mu);
  return {report.jobs[0], secs};
}

// Every delayed step lasted at least the 0.1 s delay; returns the median of the other steps.
template <class Delayed>
double undelayed_median(const timed_run& run, std::int64_t steps, Delayed delayed) {
  std::vector<double> others;
  for (std::int64_t s = 0; s < steps; ++s) {
    CAPTURE(s);
    const double t = run.step_seconds[static_cast<std::size_t>(s)];
    if (delayed(s))
      CHECK(t >= 0.1);
    else
      others.push_back(t);
  }
  MESSAGE("median undelayed step: " << median(others) << " s");
  return median(others);
}

// Two SGD workers for `steps` steps under `sync`, with one `delay` fault entry.
timed_run run_delayed(const std::string& sync, std::int64_t steps, const std::string& fault) {
  return run_timed(
      config_text(two_workers, "{kind: sgd, lr: 0.05}", sync, steps, "      - " + fault + "\n"),
      steps);
}

}  // namespace

TEST_CASE("delay fault, sync: ps: the gradient push of the faulted steps is held back") {
  const std::int64_t steps = 12;
  const auto run = run_delayed(
      "{mode: ps}", steps, "{step: 3, action: delay, target: cpu/1, seconds: 0.1, until_step: 5}");
  CHECK(undelayed_median(run, steps, [](std::int64_t s) { return s >= 3 && s <= 5; }) < 0.05);
  CHECK(run.job.faults.injected == 1);
}

TEST_CASE("delay fault, sync: allreduce: the faulted steps' reductions wait") {
  const std::int64_t steps = 10;
  const auto run =
      run_delayed("{mode: allreduce}", steps,
                  "{step: 6, action: delay, target: cpu/0, seconds: 0.1, until_step: 7}");
  CHECK(undelayed_median(run, steps, [](std::int64_t s) { return s == 6 || s == 7; }) < 0.05);
}

TEST_CASE("delay fault, sync: local: only the averaging rounds wait") {
  const std::int64_t steps = 16;
  const auto run = run_delayed("{mode: local, period: 4}", steps,
                               "{step: 0, action: delay, target: cpu/0, seconds: 0.1}");
  CHECK(undelayed_median(run, steps, [](std::int64_t s) { return (s + 1) % 4 == 0; }) < 0.05);
  CHECK(run.job.sync.rounds == 4);
}

TEST_CASE("sync: local, period adaptive under a slow link: a long period first, then shorter") {
  const std::int64_t steps = 200;
  auto yaml =
      config_text(two_workers, "{kind: sgd, lr: 0.05}", "{mode: local, period: adaptive}", steps,
                  "      - {step: 0, action: delay, target: cpu/1, seconds: 0.03}\n");
  yaml.replace(yaml.find("epochs: 3"), 9, "epochs: 10");  // 21 steps per pass
  const auto run = run_timed(yaml, steps);
  const auto& h = run.job.sync.period_history;
  REQUIRE(h.size() >= 2);
  CHECK(h[0].period == 1);  // warm-up
  CHECK(h[1].step == 5);
  // 30 ms of delay against a step of a few ms: tau_0 = ceil(4 sqrt(ratio)) is well above 4.
  CHECK(h[1].period > 4);
  for (std::size_t k = 2; k < h.size(); ++k) CHECK(h[k].period < h[k - 1].period);
  CHECK(run.job.sync.rounds < steps / 3);
  CHECK(run.job.train_loss < 1.0);
  MESSAGE("tau_0 " << h[1].period << ", final " << run.job.sync.period << ", rounds "
                   << run.job.sync.rounds << ", changes " << h.size());
}
