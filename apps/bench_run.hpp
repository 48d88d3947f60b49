#pragma once
// One job run in-process for a benchmark: the job's report and its live step metrics in step
// order. Shared by the `troupe bench` commands that drive whole runs (hetero, sync).
#include <string>
#include <vector>

#include "actors/runtime.hpp"

namespace troupe::apps {

struct job_run {
  job_report job;
  std::vector<live_metrics> steps;  // one per completed step, in order
};

// Runs the config in `yaml` (one job; `source` names it in messages) and collects its metrics.
// Throws troupe::runtime_failure naming `bench` unless the job completed.
job_run run_one_job(const std::string& yaml, const std::string& source, runtime_options options,
                    const std::string& bench);

}  // namespace troupe::apps
