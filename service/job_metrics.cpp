#include "service/job_metrics.hpp"

#include <algorithm>

#include "core/prometheus_text.hpp"

namespace troupe::service {

void job_metrics::on_step(const live_metrics& m) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& j = jobs_[m.job];
  if (j.ended) return;  // a late record of a job that ended
  j.steps = m.step;
  double step_samples = 0;
  for (const auto n : m.worker_samples) step_samples += static_cast<double>(n);
  j.samples += step_samples;
  j.loss = m.loss;
  j.samples_per_second = m.samples_per_second;
  const auto ranks = m.worker_compute_seconds.size();
  j.compute_seconds.resize(std::max(j.compute_seconds.size(), ranks), 0.0);
  j.busy.assign(ranks, 0.0);
  j.share.assign(m.worker_samples.size(), 0.0);
  for (std::size_t r = 0; r < ranks; ++r) {
    j.compute_seconds[r] += m.worker_compute_seconds[r];
    if (m.step_seconds > 0) j.busy[r] = std::min(1.0, m.worker_compute_seconds[r] / m.step_seconds);
  }
  for (std::size_t r = 0; r < m.worker_samples.size(); ++r)
    if (step_samples > 0) j.share[r] = static_cast<double>(m.worker_samples[r]) / step_samples;
  j.split = m.split;
  j.sync_period = m.sync_period;
  j.device_share = m.share;
  j.rebalances = m.rebalances;
  j.wire_bytes = m.wire_bytes;
  j.reduce_counts.resize(bounds().size() + 1, 0);
  std::size_t b = 0;
  while (b < bounds().size() && m.reduce_seconds > bounds()[b]) ++b;
  ++j.reduce_counts[b];
  j.reduce_sum += m.reduce_seconds;
}

const std::vector<double>& job_metrics::bounds() {
  static const std::vector<double> b = {0.001, 0.005, 0.01, 0.05, 0.1, 0.25,
                                        0.5,   1,     2.5,  5,    10,  30};
  return b;
}

void job_metrics::on_end(const job_report& r) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& j = jobs_[r.name];
  if (!j.ended) ended_.push_back(r.name);
  j.ended = true;
  j.completed = r.status == job_status::completed;
  j.steps = r.steps;
  j.test_accuracy = r.test_accuracy;
  j.failures = r.faults.failures_by_class;
  j.restarts = r.faults.restarts;
  j.migrations = r.faults.migrations;
  j.detect_seconds.clear();
  j.recovery_seconds.clear();
  for (const double ms : r.faults.detect_ms) j.detect_seconds.push_back(ms / 1e3);
  for (const double ms : r.faults.recovery_ms) j.recovery_seconds.push_back(ms / 1e3);
  j.busy.clear();
  j.share.clear();
  while (ended_.size() > keep_ended_) {
    jobs_.erase(ended_.front());
    ended_.pop_front();
  }
}

std::string job_metrics::text(const std::map<std::string, int>& jobs_by_state,
                              const std::map<std::string, int>& agents_by_health) const {
  prometheus_text out;
  out.family("troupe_jobs", "gauge", "Jobs the service has, by state.");
  for (const auto& [state, n] : jobs_by_state) out.sample("troupe_jobs", {{"state", state}}, n);
  out.family("troupe_agents", "gauge", "Agents that joined since the service started, by health.");
  for (const auto& [health, n] : agents_by_health)
    out.sample("troupe_agents", {{"health", health}}, n);

  std::lock_guard<std::mutex> lock(mu_);
  // One family at a time, over every job: the format wants a family's samples together.
  const auto each = [&](const char* name, const char* type, const char* help, auto value) {
    out.family(name, type, help);
    for (const auto& [id, j] : jobs_) value(id, j);
  };
  each("troupe_steps_total", "counter", "Training steps completed.",
       [&](const std::string& id, const job& j) {
         out.sample("troupe_steps_total", {{"job", id}}, static_cast<double>(j.steps));
       });
  each("troupe_samples_total", "counter", "Training samples computed.",
       [&](const std::string& id, const job& j) {
         out.sample("troupe_samples_total", {{"job", id}}, j.samples);
       });
  each("troupe_loss", "gauge", "The mean training loss of the last step.",
       [&](const std::string& id, const job& j) {
         out.sample("troupe_loss", {{"job", id}}, j.loss);
       });
  each("troupe_samples_per_second", "gauge", "Training samples per second, the last step.",
       [&](const std::string& id, const job& j) {
         if (!j.ended) out.sample("troupe_samples_per_second", {{"job", id}}, j.samples_per_second);
       });
  each("troupe_test_accuracy", "gauge", "Test accuracy of a completed job.",
       [&](const std::string& id, const job& j) {
         if (j.completed) out.sample("troupe_test_accuracy", {{"job", id}}, j.test_accuracy);
       });
  each("troupe_worker_compute_seconds_total", "counter", "Device compute time of a worker (rank).",
       [&](const std::string& id, const job& j) {
         for (std::size_t r = 0; r < j.compute_seconds.size(); ++r)
           out.sample("troupe_worker_compute_seconds_total",
                      {{"job", id}, {"worker", std::to_string(r)}}, j.compute_seconds[r]);
       });
  each("troupe_worker_busy_ratio", "gauge", "A worker's compute time over the last step's time.",
       [&](const std::string& id, const job& j) {
         for (std::size_t r = 0; r < j.busy.size(); ++r)
           out.sample("troupe_worker_busy_ratio", {{"job", id}, {"worker", std::to_string(r)}},
                      j.busy[r]);
       });
  each("troupe_worker_batch_share", "gauge", "A worker's part of the last step's batch.",
       [&](const std::string& id, const job& j) {
         for (std::size_t r = 0; r < j.share.size(); ++r)
           out.sample("troupe_worker_batch_share", {{"job", id}, {"worker", std::to_string(r)}},
                      j.share[r]);
       });
  each("troupe_split_samples", "gauge", "Samples of the last step's batch per group (the split).",
       [&](const std::string& id, const job& j) {
         if (j.ended) return;
         for (const auto& [group, n] : j.split)
           out.sample("troupe_split_samples", {{"job", id}, {"group", group}},
                      static_cast<double>(n));
       });
  each("troupe_failures_total", "counter", "Worker failures an ended job handled, by class.",
       [&](const std::string& id, const job& j) {
         for (const auto& [cls, n] : j.failures)
           out.sample("troupe_failures_total", {{"job", id}, {"class", cls}},
                      static_cast<double>(n));
       });
  each("troupe_restarts_total", "counter", "Workers an ended job restarted.",
       [&](const std::string& id, const job& j) {
         if (j.ended)
           out.sample("troupe_restarts_total", {{"job", id}}, static_cast<double>(j.restarts));
       });
  each("troupe_migrations_total", "counter", "Worker shares an ended job migrated.",
       [&](const std::string& id, const job& j) {
         if (j.ended)
           out.sample("troupe_migrations_total", {{"job", id}}, static_cast<double>(j.migrations));
       });
  each("troupe_sync_period", "gauge", "Steps per parameter average (sync: local; else 1).",
       [&](const std::string& id, const job& j) {
         if (!j.ended) out.sample("troupe_sync_period", {{"job", id}}, j.sync_period);
       });
  each("troupe_share", "gauge", "The job's share of its shared devices (1 when it shares none).",
       [&](const std::string& id, const job& j) {
         if (!j.ended) out.sample("troupe_share", {{"job", id}}, j.device_share);
       });
  each("troupe_rebalances_total", "counter", "Split changes the rebalancer made.",
       [&](const std::string& id, const job& j) {
         out.sample("troupe_rebalances_total", {{"job", id}}, static_cast<double>(j.rebalances));
       });
  each("troupe_wire_bytes_total", "counter",
       "Bytes the job's workers moved between processes (0 in one process).",
       [&](const std::string& id, const job& j) {
         out.sample("troupe_wire_bytes_total", {{"job", id}}, static_cast<double>(j.wire_bytes));
       });
  each("troupe_reduce_seconds", "histogram", "Each step's reduction and apply.",
       [&](const std::string& id, const job& j) {
         if (!j.reduce_counts.empty())
           out.histogram_counts("troupe_reduce_seconds", {{"job", id}}, bounds(), j.reduce_counts,
                                j.reduce_sum);
       });
  // From an injected fault firing to the job seeing the failure; from a failure to the next
  // completed step.
  each("troupe_detect_seconds", "histogram", "Time to detect an injected fault.",
       [&](const std::string& id, const job& j) {
         if (j.ended)
           out.histogram("troupe_detect_seconds", {{"job", id}}, bounds(), j.detect_seconds);
       });
  each("troupe_recovery_seconds", "histogram", "Time from a failure to the next completed step.",
       [&](const std::string& id, const job& j) {
         if (j.ended)
           out.histogram("troupe_recovery_seconds", {{"job", id}}, bounds(), j.recovery_seconds);
       });
  return out.text();
}

}  // namespace troupe::service
