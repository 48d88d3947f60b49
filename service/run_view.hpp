#pragma once
// `troupe run --http HOST:PORT`: the API of one run for the dashboard, Prometheus and curl. It
// reads the run's jobs, their series and logs, its agents and `/metrics`, and takes cancel,
// inject and drain like a service; it takes no new jobs (a run's jobs are its config's).
#include <map>
#include <mutex>
#include <string>

#include "actors/runtime.hpp"
#include "service/api_backend.hpp"
#include "service/live_jobs.hpp"

namespace troupe::service {

class run_view : public api_backend {
 public:
  // Subscribes to the runtime's callbacks: construct it before rt.start().
  run_view(runtime& rt, std::string log_dir);

  nlohmann::json submit(const std::string& yaml, const std::string& source,
                        const std::vector<std::string>& sets) override;
  nlohmann::json jobs() const override;
  nlohmann::json job(const std::string& id) const override;
  nlohmann::json series(const std::string& id) const override;
  nlohmann::json logs(const std::string& id, std::uint64_t offset,
                      std::size_t max_bytes) const override;
  nlohmann::json agents() const override;
  std::string metrics() const override;
  void cancel(const std::string& id) override;
  void inject(const std::string& id, const std::string& spec) override;
  void drain_agent(const std::string& name) override;
  bool ready() const override { return true; }

 private:
  // The job's entry of jobs(); not_found when the run has none of that name.
  nlohmann::json entry(const std::string& id) const;

  runtime& rt_;
  std::string log_dir_;
  live_jobs live_;
  mutable std::mutex mu_;
  std::map<std::string, nlohmann::json> reports_;  // ended jobs' reports, by name
};

}  // namespace troupe::service
