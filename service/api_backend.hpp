#pragma once
// What the HTTP API (service/http_api.hpp) asks of the control plane behind it: `troupe serve`'s
// job_service, or the view of one `troupe run` (service/run_view.hpp), which takes no new jobs.
// Errors: troupe::input_error (400), service::not_found (404), troupe::runtime_failure (503).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "actors/common/report.hpp"
#include "core/error.hpp"

namespace troupe::service {

// An id, job or agent that does not exist (HTTP 404, exit 2 at a client).
class not_found : public input_error {
 public:
  using input_error::input_error;
};

class api_backend {
 public:
  virtual ~api_backend() = default;
  // {"jobs": [{id, name, priority, state}]} of a jobs-only file.
  virtual nlohmann::json submit(const std::string& yaml, const std::string& source,
                                const std::vector<std::string>& sets) = 0;
  // {"jobs": [...]}: queued ones in the order they start, then running, then ended.
  virtual nlohmann::json jobs() const = 0;
  virtual nlohmann::json job(const std::string& id) const = 0;
  // {"series": ..., "events": [...]} as the report writes them (docs/REPORT.md): live while the
  // job runs, the report's once it ended.
  virtual nlohmann::json series(const std::string& id) const = 0;
  virtual nlohmann::json logs(const std::string& id, std::uint64_t offset,
                              std::size_t max_bytes) const = 0;
  virtual nlohmann::json agents() const = 0;
  virtual std::string metrics() const = 0;
  virtual void cancel(const std::string& id) = 0;
  virtual void inject(const std::string& id, const std::string& spec) = 0;
  virtual void drain_agent(const std::string& name) = 0;
  virtual bool ready() const = 0;
};

// The job's log file from byte `offset`, at most `max_bytes`: {id, text, offset (the next),
// ended}. Shared by both backends: a job's log is LOG_DIR/ID.log in either.
nlohmann::json read_log(const std::string& log_dir, const std::string& id, std::uint64_t offset,
                        std::size_t max_bytes, bool ended);

// {"agents": [...]}: each agent's name, group, device, count, threads, host, pid, joined_s and
// health (`joined`, or `lost` with lost_s and lost_reason).
nlohmann::json agents_json(const std::vector<agent_report>& agents);

}  // namespace troupe::service
