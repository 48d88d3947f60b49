#include "actors/common/specs.hpp"

namespace troupe::actors {

// Brace lists in the fields' order: specs.test.cpp checks that every key arrives.
models::model_spec model_spec_of(const config::model_config& c, const data::dataset& train) {
  return {c.kind, train.sample_shape, train.classes, c.hidden, c.conv_layers, c.kernel};
}

models::optimizer_spec optimizer_spec_of(const config::optimizer_config& c) {
  return {name_of(c.kind), c.lr, c.momentum, c.nesterov, c.beta1, c.beta2, c.eps, c.weight_decay};
}

bool replica_in_agent(const config::job_config& job, const config::group_config& group) {
  return job.sync.mode == sync_mode::allreduce &&
         job.optimizer.form == optimizer_form::replicated && group.process != group_process::local;
}

}  // namespace troupe::actors
