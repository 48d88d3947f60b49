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

}  // namespace troupe::actors
