#pragma once
// What embedding apps and the progress line see of a running job (no CAF here): one record per
// completed step, and log lines. Callbacks run on the metrics hub's thread, one at a time: they
// must be quick and must not block on the runtime.
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace troupe {

struct live_metrics {
  std::string job;
  std::int64_t step = 0;  // steps completed
  std::int64_t steps_total = 0;
  std::int64_t epoch = 0;  // the pass over the training set (0-based)
  std::int64_t epochs = 0;
  double loss = 0.0;  // mean loss of this step's global batch
  double samples_per_second = 0.0;
  double step_seconds = 0.0;
  double elapsed_seconds = 0.0;
  std::vector<std::pair<std::string, std::int64_t>> split;  // samples per group this step
  double imbalance_index = 0.0;  // CV of this step's per-worker compute seconds (0 = balanced)
  double noise_scale = 0.0;      // smoothed gradient noise scale B_noise; 0 until estimable
  std::vector<std::int64_t> worker_samples;    // by rank: samples computed this step
  std::vector<double> worker_compute_seconds;  // by rank: device compute time this step
  double reduce_seconds = 0.0;                 // this step's reduction and apply
  int sync_period = 1;                         // steps per average now (sync: local; else 1)
  double share = 1.0;                          // the job's share on shared devices
  std::int64_t rebalances = 0;                 // split changes so far
  std::int64_t wire_bytes = 0;                 // bytes its workers moved between processes so far
};

// One job as the task manager sees it now (runtime::jobs()).
struct job_view {
  std::string name;
  std::string status;  // queued, running, completed, failed, cancelled, interrupted
  int priority = 0;
  bool preemptible = false;
  // Queued: its place in the order jobs start (0 starts next) and why it waits; running: why it
  // is being paused ("preempted by JOB"), else empty.
  int position = -1;
  std::string reason;
};

using metrics_callback = std::function<void(const live_metrics&)>;
using log_callback = std::function<void(const std::string& job, const std::string& line)>;

struct job_report;
struct job_event;
// An event of a job's course as it happens (failure, detected, recovered, restart, membership,
// rebalance, resume): the same records the report's `events` keeps.
using event_callback = std::function<void(const std::string& job, const job_event& event)>;
// A job ended (completed, failed, cancelled, interrupted; a preempted job ends only when it
// ends for good): its report.
using job_end_callback = std::function<void(const job_report&)>;

struct metrics_subscribers {
  std::vector<metrics_callback> on_step;
  std::vector<log_callback> on_log;
  std::vector<job_end_callback> on_job_end;
  std::vector<event_callback> on_event;
};

}  // namespace troupe
