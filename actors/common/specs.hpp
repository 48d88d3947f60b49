#pragma once
// The config's model and optimizer sections as the specs models/ builds from: one conversion,
// shared by the job (PS shards, the prototype model) and the allreduce replicas.
#include "core/config.hpp"
#include "data/dataset.hpp"
#include "models/model.hpp"
#include "models/optimizer.hpp"

namespace troupe::actors {

// The model of `c` over samples shaped and labelled like `train`.
models::model_spec model_spec_of(const config::model_config& c, const data::dataset& train);
models::optimizer_spec optimizer_spec_of(const config::optimizer_config& c);

// Whether a worker of `job` in `group` keeps its replica in the group's agent: `sync: allreduce`
// with the replicated optimizer, in a group that does not compute here. The job's reduction is
// then a ring between processes (actors/sync/process_ring.hpp).
bool replica_in_agent(const config::job_config& job, const config::group_config& group);

}  // namespace troupe::actors
