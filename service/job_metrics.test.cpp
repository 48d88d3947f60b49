#include "service/job_metrics.hpp"

#include <doctest/doctest.h>

using troupe::service::job_metrics;

namespace {

troupe::live_metrics step(const std::string& job, std::int64_t n) {
  troupe::live_metrics m;
  m.job = job;
  m.step = n;
  m.loss = 0.5;
  m.step_seconds = 0.01;
  m.samples_per_second = 6400;
  m.worker_samples = {48, 16};
  m.worker_compute_seconds = {0.008, 0.004};
  m.split = {{"cpu", 48}, {"sim", 16}};
  m.reduce_seconds = 0.003;
  m.sync_period = 4;
  m.share = 0.25;
  m.rebalances = n / 2;
  m.wire_bytes = 1000 * n;
  return m;
}

bool has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

// Each of `lines` is a whole line of the exposition `text`.
void check_lines(const std::string& text, std::initializer_list<const char*> lines) {
  for (const char* line : lines) CHECK_MESSAGE(has(text, line), line);
}

}  // namespace

TEST_CASE("a running job's counters sum its steps; the last step gives the gauges") {
  job_metrics m;
  m.on_step(step("a-1", 1));
  m.on_step(step("a-1", 2));
  const auto t = m.text({{"running", 1}}, {{"joined", 2}});
  check_lines(t, {
                     "troupe_jobs{state=\"running\"} 1",
                     "troupe_agents{health=\"joined\"} 2",
                     "troupe_steps_total{job=\"a-1\"} 2",
                     "troupe_samples_total{job=\"a-1\"} 128",
                     "troupe_worker_compute_seconds_total{job=\"a-1\",worker=\"0\"} 0.016",
                     "troupe_worker_busy_ratio{job=\"a-1\",worker=\"1\"} 0.4",
                     "troupe_worker_batch_share{job=\"a-1\",worker=\"0\"} 0.75",
                     "troupe_split_samples{job=\"a-1\",group=\"sim\"} 16",
                     "troupe_sync_period{job=\"a-1\"} 4",
                     "troupe_share{job=\"a-1\"} 0.25",
                     "troupe_rebalances_total{job=\"a-1\"} 1",
                     "troupe_wire_bytes_total{job=\"a-1\"} 2000",
                     // Two reductions of 3 ms: both in the 5 ms bucket and above, none at 1 ms.
                     "troupe_reduce_seconds_bucket{job=\"a-1\",le=\"0.001\"} 0",
                     "troupe_reduce_seconds_bucket{job=\"a-1\",le=\"0.005\"} 2",
                     "troupe_reduce_seconds_count{job=\"a-1\"} 2",
                     "troupe_reduce_seconds_sum{job=\"a-1\"} 0.006",
                 });
  CHECK(t.find("troupe_test_accuracy{") == std::string::npos);
}

TEST_CASE("an ended job keeps its counters and gains its report's figures") {
  job_metrics m;
  m.on_step(step("a-1", 1));
  troupe::job_report r;
  r.name = "a-1";
  r.status = troupe::job_status::completed;
  r.steps = 1;
  r.test_accuracy = 0.875;
  r.faults.failures_by_class = {{"crash", 2}};
  r.faults.restarts = 2;
  r.faults.recovery_ms = {4, 300};
  m.on_end(r);
  m.on_step(step("a-1", 9));  // a late record after the end changes nothing
  const auto t = m.text({}, {});
  check_lines(t, {
                     "troupe_steps_total{job=\"a-1\"} 1",
                     "troupe_samples_total{job=\"a-1\"} 64",
                     "troupe_test_accuracy{job=\"a-1\"} 0.875",
                     "troupe_failures_total{job=\"a-1\",class=\"crash\"} 2",
                     "troupe_restarts_total{job=\"a-1\"} 2",
                     "troupe_recovery_seconds_bucket{job=\"a-1\",le=\"0.005\"} 1",
                     "troupe_recovery_seconds_bucket{job=\"a-1\",le=\"0.25\"} 1",
                     "troupe_recovery_seconds_bucket{job=\"a-1\",le=\"0.5\"} 2",
                     "troupe_recovery_seconds_count{job=\"a-1\"} 2",
                 });
  // Gauges of the running job are gone: it no longer runs.
  CHECK(t.find("troupe_worker_busy_ratio{job=\"a-1\"") == std::string::npos);
  CHECK(t.find("troupe_samples_per_second{job=\"a-1\"") == std::string::npos);
}

TEST_CASE("only the newest ended jobs are exported") {
  job_metrics m(2);
  for (const auto* id : {"a-1", "b-2", "c-3"}) {
    m.on_step(step(id, 1));
    troupe::job_report r;
    r.name = id;
    r.status = troupe::job_status::cancelled;
    m.on_end(r);
  }
  m.on_step(step("d-4", 1));
  const auto t = m.text({}, {});
  CHECK(t.find("job=\"a-1\"") == std::string::npos);
  check_lines(t, {
                     "troupe_steps_total{job=\"b-2\"} 0",
                     "troupe_steps_total{job=\"c-3\"} 0",
                     "troupe_steps_total{job=\"d-4\"} 1",
                 });
  // A cancelled job was never evaluated.
  CHECK(t.find("troupe_test_accuracy{") == std::string::npos);
}
