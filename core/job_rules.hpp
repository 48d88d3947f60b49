#pragma once
// The rules of a job config that tie keys together, in one place for both ways a config is made:
// the YAML loader (core/config_load, which adds the file and line) and an embedding app that
// builds a config_job in code (actors/runtime checks it before anything starts).
#include <optional>
#include <string>

#include "core/config.hpp"

namespace troupe::config {

struct rule_violation {
  std::string section;  // the job's key that holds the offending key, e.g. "optimizer"; "" for
                        // a key of the job itself
  std::string key;      // e.g. "form"
  std::string what;
};

// Samples per block of the canonical reduction, or 0 where the job does not use it: it does with
// `deterministic: true` and a global data plan (a sharded plan cuts each worker's slice from its
// own shard, so its slices cannot follow the blocks of one order), in sync.mode ps, and in
// allreduce with the replicated optimizer: in one process, and through the process ring when
// some group's replica lives in an agent (`replicas_in_agents`), unless sync.codec compresses
// that ring (a lossy sum with error feedback has no canonical order).
std::int64_t reduction_block(const job_config& job, bool replicas_in_agents = false);

// The first rule `job` breaks, or nothing. The loader's per-key ranges catch the single-key
// rules first (with a line number); these catch them in configs built in code.
std::optional<rule_violation> job_rule_violation(const job_config& job);

}  // namespace troupe::config
