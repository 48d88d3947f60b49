#pragma once
// Shared by the integration tests that run a whole config through the embedded runtime and
// compare the parameters it ends with.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "actors/runtime.hpp"
#include "core/config_load.hpp"

namespace troupe::testing {

// Runs a one-job config to completion (with a deadline, never a hang) and returns its report;
// the job must have completed `steps` steps and kept its final parameters.
inline job_report run_one(const std::string& yaml, const std::string& source, std::int64_t steps) {
  runtime_options opts;
  opts.wait_seconds = 120;
  runtime rt(config::parse_config(yaml, source), opts);
  auto report = rt.run();
  REQUIRE(report.jobs.size() == 1);
  const auto& j = report.jobs[0];
  INFO("error: " << j.error);
  REQUIRE(j.status == troupe::job_status::completed);
  REQUIRE(j.steps == steps);
  REQUIRE(j.final_params);
  return j;
}

// Runs a one-job config, resumed from the checkpoints under `resume` when it is not empty (as
// `troupe run --resume` does), and returns the job's report whatever its status.
inline job_report run_resumable(const std::string& yaml, const std::string& source,
                                const std::string& resume = "") {
  runtime_options opts;
  opts.wait_seconds = 120;
  opts.resume_dir = resume;
  runtime rt(config::parse_config(yaml, source), opts);
  auto report = rt.run();
  REQUIRE(report.jobs.size() == 1);
  return report.jobs[0];
}

// `text` (one job, last in the file) with a checkpoint every 10 steps into `dir`; as it is when
// `dir` is empty.
inline std::string with_checkpoints(std::string text, const std::string& dir) {
  if (!dir.empty()) text += "    checkpoint: {dir: " + dir + ", every_steps: 10}\n";
  return text;
}

// The sample ledger's verdict: `passes` passes ended, and no sample of any pass trained twice or
// (in an ended pass) never.
inline void check_each_sample_once(const job_report& j, std::int64_t passes) {
  REQUIRE(j.samples);
  CHECK(j.samples->passes_checked == passes);
  CHECK(j.samples->counted_twice == 0);
  CHECK(j.samples->never_counted == 0);
}

// The run's faults: `injected` injected, and exactly the failures of each class in `classes`.
inline void check_failures(const job_report& j, std::int64_t injected,
                           const std::map<std::string, std::int64_t>& classes) {
  CHECK(j.faults.injected == injected);
  for (const auto& [name, count] : classes) {
    CAPTURE(name);
    REQUIRE(j.faults.failures_by_class.count(name) == 1);
    CHECK(j.faults.failures_by_class.at(name) == count);
  }
}

// |a - b| / |b|, in double.
inline double relative_l2(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double diff = 0.0, ref = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    diff += d * d;
    ref += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(diff / ref);
}

// The job's course (failures, restarts, membership generations), one event a line: what a
// failing check says about how the run went.
inline std::string events_text(const job_report& j) {
  std::string out;
  for (const auto& e : j.events)
    out += "\n  step " + std::to_string(e.step) + " " + e.kind + ": " + e.detail;
  return out;
}

// A deterministic job small enough for many runs in a test: an MLP 32-16 on 2500 synthetic blobs,
// batch 96, over the cluster groups `groups` (YAML lines), for `steps` steps.
inline std::string small_mlp_config(const std::string& name, const std::string& groups,
                                    const std::string& optimizer, const std::string& sync,
                                    std::int64_t steps, const std::string& faults = "") {
  std::string y = "cluster:\n  groups:\n" + groups +
                  "jobs:\n"
                  "  - name: " +
                  name +
                  "\n"
                  "    model: {kind: mlp, hidden: [32, 16]}\n"
                  "    data:\n"
                  "      dataset: synthetic\n"
                  "      synthetic: {kind: blobs, samples: 2500}\n"
                  "      preprocess: [standardize]\n"
                  "      split: weighted\n"
                  "    optimizer: " +
                  optimizer +
                  "\n"
                  "    batch: 96\n"
                  "    epochs: 3\n"
                  "    max_steps: " +
                  std::to_string(steps) +
                  "\n"
                  "    sync: " +
                  sync +
                  "\n"
                  "    seed: 7\n"
                  "    deterministic: true\n";
  if (!faults.empty()) y += "    faults:\n" + faults;
  return y;
}

// Two cpu devices and a 2x slower sim device, weights from the config.
inline const std::string three_workers =
    "    - {name: cpu, device: cpu, count: 2, threads: 1, weight: 1.0}\n"
    "    - {name: slow, device: sim, base: cpu, slowdown: 2, count: 1, threads: 1, weight: 0.5}\n";

}  // namespace troupe::testing
