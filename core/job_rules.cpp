#include "core/job_rules.hpp"

namespace troupe::config {

std::optional<rule_violation> job_rule_violation(const job_config& j) {
  // The distributed form allreduces Max-AdaBelief's moments: nothing else defines it.
  if (j.optimizer.form == "distributed" &&
      (j.optimizer.kind != "max-adabelief" || j.sync.mode != "allreduce"))
    return rule_violation{"optimizer", "form",
                          "distributed needs optimizer.kind: max-adabelief and sync.mode: "
                          "allreduce (got kind: " +
                              j.optimizer.kind + ", sync.mode: " + j.sync.mode + ")"};
  // allreduce and local keep parameters and optimizer replicas on the workers, which take no
  // part in checkpoints yet.
  if (j.sync.mode != "ps" && !j.checkpoint.dir.empty() &&
      (j.checkpoint.every_steps > 0 || j.checkpoint.every_seconds > 0))
    return rule_violation{"checkpoint", "dir",
                          "checkpoints are not available with sync.mode: " + j.sync.mode +
                              " yet (use sync.mode: ps, or remove the checkpoint keys)"};
  return std::nullopt;
}

}  // namespace troupe::config
