#pragma once
// The control plane of `troupe serve`: the embedded runtime (actors/runtime.hpp) with the
// service's cluster, fed with jobs while it runs, and the job database (service/job_store.hpp)
// that makes it survive its own crash.
//
// A submitted job is known by its id, NAME-SEQ ("mlp-3"): the runtime runs it under that name,
// its log is LOGS/ID.log and its checkpoints STATE/checkpoints/ID/. `after:` names a job of the
// same file, or else the newest job the service has of that name or id.
//
// What the database says, and what a restart does with it:
//   queued, paused  -> submitted again, in submission order;
//   running         -> submitted again; it resumes from its newest checkpoint (a job whose sync
//                      mode takes none starts over, and its history shows both starts);
//   ended           -> kept: its report is still served.
// `after:` is settled against the database too, ended jobs included: a dependency that completed
// (in this service's life or an earlier one) is met; one that failed, was cancelled or was
// interrupted cancels the job that waits for it.
// A stop (SIGTERM: stop()) drains the running jobs to a checkpoint and leaves them queued, so the
// next start resumes them.
//
// Thread-safe: the HTTP threads call it, and the runtime's callbacks (its metrics thread) update
// it.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "actors/runtime.hpp"
#include "service/api_backend.hpp"
#include "service/job_store.hpp"

namespace troupe::service {

struct service_options {
  std::string state_dir;     // the database, the logs, the checkpoints and the cluster
  std::string cluster_file;  // a file with `cluster:`; empty: the one kept from the last start
  std::string listen = "127.0.0.1:7070";  // where agents join
  std::uint16_t control_port = 0;         // agents' control connection (0: a free one)
  std::string join_token;
  bool insecure = false;
  std::string agent_program;  // the troupe executable, for `process: separate` groups
  double step_deadline_seconds = 600.0;
  std::string log_format = "text";  // of the jobs' log files: text or json
  // Start although the database is missing or empty beside earlier jobs' files (job_store).
  bool reset = false;
  std::function<void(const std::string&)> log;  // the service's own lines
};

class job_service : public api_backend {
 public:
  // Opens the database, reads the cluster, starts the runtime and submits again what was queued
  // or running. Bad state or cluster files are input_error naming the file.
  explicit job_service(service_options o);
  ~job_service();
  job_service(const job_service&) = delete;
  job_service& operator=(const job_service&) = delete;

  // A jobs-only file (the `troupe run` checks and messages; input_error, nothing queued).
  // The stored jobs; submit() is the same for the API.
  std::vector<stored_job> add_jobs(const std::string& yaml, const std::string& source,
                                   const std::vector<std::string>& sets);
  nlohmann::json submit(const std::string& yaml, const std::string& source,
                        const std::vector<std::string>& sets) override;
  // Every job: queued ones in the order they start, then running, then ended (newest first).
  nlohmann::json jobs() const override;
  // One job with its history and, once ended, its report. not_found for an unknown id.
  nlohmann::json job(const std::string& id) const override;
  nlohmann::json series(const std::string& id) const override;
  void cancel(const std::string& id) override;
  void inject(const std::string& id, const std::string& spec) override;
  // The job's log from byte `offset`, at most `max_bytes`: {text, offset (the next), ended}.
  nlohmann::json logs(const std::string& id, std::uint64_t offset,
                      std::size_t max_bytes) const override;
  // Every agent that joined since the start: group, devices, host, when it joined, and when and
  // why it was lost.
  nlohmann::json agents() const override;
  // `troupe drain AGENT`: the agent leaves; its workers' share moves to the others (each job's
  // supervision: restart on the group's next agent, or migrate) and it exits 0.
  void drain_agent(const std::string& name) override;

  // `/metrics`: the Prometheus text exposition (service/job_metrics.hpp).
  std::string metrics() const override;

  bool ready() const override;
  // Stops admitting jobs; running ones end at their next step boundary after a checkpoint and
  // stay queued in the database. Returns once they did, or after `seconds`.
  void stop(double seconds);
  std::uint16_t listen_port() const;

 private:
  struct state;
  std::unique_ptr<state> st_;
};

}  // namespace troupe::service
