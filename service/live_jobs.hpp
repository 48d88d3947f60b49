#pragma once
// What a control plane knows of its jobs while they run, from the runtime's callbacks: each
// running job's last step, its series so far (actors/observe/job_timeline.hpp, the one its report
// will carry) and the `/metrics` figures (service/job_metrics.hpp). `troupe serve` and `troupe run
// --http` both keep one. Thread-safe: the runtime's metrics thread writes, HTTP threads read.
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "actors/common/live_metrics.hpp"
#include "actors/common/report.hpp"
#include "actors/observe/job_timeline.hpp"
#include "service/job_metrics.hpp"

namespace troupe::service {

class live_jobs {
 public:
  void on_step(const live_metrics& m);
  void on_event(const std::string& job, const job_event& e);
  // A job ended for good: its metrics keep the report's figures; its live state goes.
  void on_end(const job_report& r);
  // A job that will run again (a retried start, a stop of the service): its live state goes.
  void forget(const std::string& job);
  // Adds `step`, `steps_total` and `loss` of the job's last step to `j`, when it runs.
  void describe(const std::string& job, nlohmann::json& j) const;
  // {series, events: []} of a running job, as a report writes them; nothing when it runs not.
  std::optional<nlohmann::json> series(const std::string& job) const;
  std::string metrics(const std::map<std::string, int>& jobs_by_state,
                      const std::map<std::string, int>& agents_by_health) const {
    return metrics_.text(jobs_by_state, agents_by_health);
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, live_metrics> last_;
  std::map<std::string, actors::job_timeline> series_;
  job_metrics metrics_;
};

}  // namespace troupe::service
