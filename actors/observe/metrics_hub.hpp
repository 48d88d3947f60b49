#pragma once
// metrics_hub: one per runtime. Every job sends it one step_metrics per completed step and its
// log lines; the hub writes each job's log file (spdlog, LOG_DIR/JOB.log) and hands the records
// to the subscribers (the progress line of `troupe run`, embedding apps; the policy actors
// subscribe here too). It owns no lifecycle beyond open log files: a job's file is
// opened (truncated, unless append_logs) at its first record of the run, flushed when the job
// finishes and closed when the task manager reports its end (job_end_atom).
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/common/caf_compat.hpp"
#include "actors/common/live_metrics.hpp"

namespace spdlog {
class logger;
}

namespace troupe::actors {

struct hub_state {
  static inline const char* name = "metrics_hub";
  std::shared_ptr<const metrics_subscribers> subscribers;
  std::string log_dir;  // empty: no log files
  // A service or a --resume run: a job's file goes on (after a line that marks the new run);
  // else it is truncated per run.
  bool append_logs = false;
  bool json_logs = false;                     // --log-format json: each line one JSON object
  std::map<std::string, std::int64_t> steps;  // each job's last step, for JSON lines
  std::map<std::string, std::shared_ptr<spdlog::logger>> logs;
  std::vector<caf::actor> policy_actors;  // (subscribe_atom, actor): step_metrics forwarded
};

caf::behavior metrics_hub(stateful<hub_state>* self,
                          std::shared_ptr<const metrics_subscribers> subscribers,
                          std::string log_dir, bool append_logs = false, bool json_logs = false);

live_metrics to_live(const msg::step_metrics& m);

}  // namespace troupe::actors
