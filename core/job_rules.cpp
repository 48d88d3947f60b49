#include "core/job_rules.hpp"

namespace troupe::config {

std::optional<rule_violation> job_rule_violation(const job_config& j) {
  const auto mode = std::string("sync.mode: ") + name_of(j.sync.mode);
  if (j.name.empty()) return rule_violation{"", "name", "a job needs a name"};
  if (j.batch < 1)
    return rule_violation{"", "batch", "must be at least 1, got " + std::to_string(j.batch)};
  if (j.sync.block < 1)
    return rule_violation{"sync", "block",
                          "must be at least 1, got " + std::to_string(j.sync.block)};
  if (j.sync.ps_shards < 1)
    return rule_violation{"sync", "ps_shards",
                          "must be at least 1, got " + std::to_string(j.sync.ps_shards)};
  if (!j.sync.adaptive_period && j.sync.period < 1)
    return rule_violation{
        "sync", "period",
        "must be a positive integer or \"adaptive\", got " + std::to_string(j.sync.period)};
  // The distributed form allreduces Max-AdaBelief's moments: nothing else defines it.
  if (j.optimizer.form == optimizer_form::distributed &&
      (j.optimizer.kind != optimizer_kind::max_adabelief || j.sync.mode != sync_mode::allreduce))
    return rule_violation{"optimizer", "form",
                          "distributed needs optimizer.kind: max-adabelief and sync.mode: "
                          "allreduce (got kind: " +
                              std::string(name_of(j.optimizer.kind)) + ", " + mode + ")"};
  // The codec compresses the gradient sums of the process ring: the replicated form's only.
  if (!j.sync.codec.empty() &&
      (j.sync.mode != sync_mode::allreduce || j.optimizer.form != optimizer_form::replicated))
    return rule_violation{"sync", "codec",
                          "applies to sync.mode: allreduce with optimizer.form: replicated (got " +
                              mode + ", form: " + name_of(j.optimizer.form) + ")"};
  // A preempted job resumes from its own checkpoint: without one it would start over.
  if (j.preemptible && j.checkpoint.dir.empty())
    return rule_violation{"", "preemptible",
                          "needs checkpoint.dir (a preempted job resumes from its checkpoint)"};
  if (j.elastic && j.elastic->min_devices > j.elastic->max_devices)
    return rule_violation{"elastic", "min_devices",
                          "must not exceed max_devices (" + std::to_string(j.elastic->min_devices) +
                              " > " + std::to_string(j.elastic->max_devices) + ")"};
  // A member that joins a running job reads the shards' parameters, or (allreduce) takes a
  // member's replica at the boundary, with the distributed form that member's moments; local
  // SGD's replicas each train on their own between averages.
  if (j.elastic && j.sync.mode == sync_mode::local)
    return rule_violation{"elastic", "min_devices",
                          "an elastic job needs sync.mode: ps or allreduce (got " + mode + ")"};
  return std::nullopt;
}

std::int64_t reduction_block(const job_config& job, bool replicas_in_agents) {
  const bool reduced_exactly =
      job.sync.mode == sync_mode::ps ||
      (job.sync.mode == sync_mode::allreduce && job.optimizer.form == optimizer_form::replicated &&
       (job.sync.codec.empty() || !replicas_in_agents));
  const bool canonical = job.deterministic && job.data.mode == data_mode::global && reduced_exactly;
  return canonical ? job.sync.block : 0;
}

}  // namespace troupe::config
