#include "core/job_rules.hpp"

namespace troupe::config {

bool checkpoints_possible(const job_config& j) {
  return j.sync.mode != sync_mode::allreduce || j.optimizer.form == optimizer_form::replicated;
}

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
  // A checkpoint holds one optimizer state: in the distributed form each replica's differs from
  // the others' (local SGD saves member 0's after an average; see actors/job_sync_replicas.cpp).
  if (!checkpoints_possible(j) && !j.checkpoint.dir.empty() &&
      (j.checkpoint.every_steps > 0 || j.checkpoint.every_seconds > 0))
    return rule_violation{
        "checkpoint", "dir",
        "checkpoints are not available with " + mode +
            " and optimizer.form: distributed yet (use optimizer.form: replicated, or remove the "
            "checkpoint keys)"};
  // A preempted job resumes from its own checkpoint: without one it would start over.
  if (j.preemptible && (j.checkpoint.dir.empty() || !checkpoints_possible(j)))
    return rule_violation{"", "preemptible",
                          checkpoints_possible(j)
                              ? "needs checkpoint.dir (a preempted job resumes from its checkpoint)"
                              : "needs checkpoints, which are not available with " + mode +
                                    " and optimizer.form: distributed yet"};
  if (j.elastic && j.elastic->min_devices > j.elastic->max_devices)
    return rule_violation{"elastic", "min_devices",
                          "must not exceed max_devices (" + std::to_string(j.elastic->min_devices) +
                              " > " + std::to_string(j.elastic->max_devices) + ")"};
  // A member that joins a running job reads the shards' parameters, or (allreduce, replicated)
  // takes a member's replica at the boundary; local SGD's replicas each have their own
  // optimizer state, and the distributed form its own moments.
  if (j.elastic &&
      !(j.sync.mode == sync_mode::ps ||
        (j.sync.mode == sync_mode::allreduce && j.optimizer.form == optimizer_form::replicated)))
    return rule_violation{"elastic", "min_devices",
                          "an elastic job needs sync.mode: ps, or allreduce with "
                          "optimizer.form: replicated (got " +
                              mode + ")"};
  return std::nullopt;
}

std::int64_t reduction_block(const job_config& job) {
  const bool canonical =
      job.deterministic && job.sync.mode == sync_mode::ps && job.data.mode == data_mode::global;
  return canonical ? job.sync.block : 0;
}

}  // namespace troupe::config
