#pragma once
// data_distributor: one per job. Loads and preprocesses the job's data (once, on its own thread:
// it is spawned detached because loading blocks), holds the split weights, and answers each
// step's plan: the step's global batch (a permutation slice, actors/job/job_data.hpp) cut into
// per-rank counts by the current weights (data::split_even / data::split_weighted).
//
// State machine:
//
//   EMPTY --1--> LOADED --2--> LOADED --3--> LOADED
//     \--4--> EMPTY (error answered)
//
//   1. (data_atom) from the job: load; reply local_ref<data_bundle>.
//   2. split_update(e, weights): the split of every later plan (even when all weights are 1).
//   3. plan_request(e, step): send step_plan + local_ref<index_list> to the requester.
//   4. loading fails: reply the error (input_failure for bad input); a later (data_atom) retries.
//   5. sample_losses(e, step) + local_ref<sample_loss_list> from a worker (`data.priority`): the
//      samples' scores follow their losses (actors/job/job_priority.hpp).
// With `data.mode: sharded`, edge 3 takes each rank's slice from its own shard (shard_plan.hpp).
// With `data.priority`, edge 3 draws the step's indices by priority (with replacement, weights
// in the index list) instead of taking the pass's permutation slice.
// Messages of another generation are dropped (counted) as everywhere.
#include <memory>
#include <optional>

#include "actors/common/caf_compat.hpp"
#include "actors/common/generation_gate.hpp"
#include "actors/job/job_data.hpp"
#include "actors/job/job_priority.hpp"
#include "actors/job/shard_plan.hpp"

namespace troupe::actors {

struct distributor_state {
  static inline const char* name = "data_distributor";
  generation_gate gate;
  config::job_config cfg;
  std::int64_t block = 0;  // the canonical reduction's (config::reduction_block); 0: none
  data_bundle data;
  std::optional<step_sampler> sampler;
  std::optional<priority_plan> priority;  // data.priority
  std::optional<shard_plan> shards;       // data.mode: sharded (cut at the first plan)
  std::vector<double> weights;            // by rank; empty until the job sends a split
};

// `block`: the canonical reduction's block (plans are cut at its boundaries); 0 for none.
caf::behavior data_distributor(stateful<distributor_state>* self, msg::job_id job,
                               msg::generation_id generation, config::job_config cfg,
                               std::int64_t block);

}  // namespace troupe::actors
