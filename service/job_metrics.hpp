#pragma once
// What `/metrics` says about the jobs of a service, in Prometheus' text format
// (core/prometheus_text.hpp): fed with every step's live metrics and every job's report, and
// written on each scrape. Labels stay few: job, worker (its rank), group, class, state, health;
// never a step.
//
// A running job's counters are summed from its steps (so a job resumed after a restart of the
// service starts them over: Prometheus reads that as a counter reset). An ended job keeps its
// last values and gains its report's figures (test accuracy, failures by class, restarts,
// migrations, detection and recovery times as histograms); the newest `keep_ended` ended jobs
// are exported, so a service that runs for weeks does not grow its scrape without end.
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "actors/common/live_metrics.hpp"
#include "actors/common/report.hpp"

namespace troupe::service {

class job_metrics {
 public:
  explicit job_metrics(std::size_t keep_ended = 100) : keep_ended_(keep_ended) {}
  void on_step(const live_metrics& m);
  void on_end(const job_report& r);
  // The exposition, with the service's job counts by state and its agents by health.
  std::string text(const std::map<std::string, int>& jobs_by_state,
                   const std::map<std::string, int>& agents_by_health) const;

 private:
  struct job {
    std::int64_t steps = 0;
    double samples = 0;
    double loss = 0;
    double samples_per_second = 0;
    std::vector<double> compute_seconds;  // by rank, summed over steps
    std::vector<double> busy;             // by rank, the last step: compute / step time
    std::vector<double> share;            // by rank, the last step: its part of the batch
    std::vector<std::pair<std::string, std::int64_t>> split;  // the last step, by group
    int sync_period = 1;
    double device_share = 1.0;  // on shared devices
    std::int64_t rebalances = 0, wire_bytes = 0;
    std::vector<std::uint64_t> reduce_counts;  // per bucket of reduce_bounds()
    double reduce_sum = 0;
    bool ended = false;
    bool completed = false;  // only a completed job was evaluated
    double test_accuracy = 0;
    std::map<std::string, std::int64_t> failures;  // by class
    std::int64_t restarts = 0, migrations = 0;
    std::vector<double> detect_seconds, recovery_seconds;
  };
  // Buckets of the step's reduction time and of detection and recovery: 1 ms to 30 s.
  static const std::vector<double>& bounds();
  mutable std::mutex mu_;
  std::size_t keep_ended_;
  std::map<std::string, job> jobs_;
  std::deque<std::string> ended_;  // oldest first
};

}  // namespace troupe::service
