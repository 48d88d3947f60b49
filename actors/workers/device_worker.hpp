#pragma once
// device_worker: one per device per job. Owns a model replica (a clone of the job's prototype,
// with its own scratch space) and one device, and computes gradient SUMS of the slices the job
// hands it, reading the parameters from the job's shared store (the in-process "pull": the
// store's version must equal the command's version; no bytes are copied).
//
// It is spawned DETACHED (its own thread, actors/common/caf_compat.hpp spawn_detached): a step
// blocks that thread for the whole compute, never one of CAF's scheduler threads, so the control
// plane (job, shards, task manager, metrics) stays responsive while devices compute.
//
// State machine:
//
//   BUILDING --1--> READY --2--> READY ... --4--> (gone)
//       \--3--> (gone, reason = input)
//
//   1. start: build the device (devices::make_device) and the model clone; send worker_ready.
//   2. compute_cmd / eval_cmd / probe_cmd of the current generation: run it, answer step_done /
//      eval_done / probe_done. A command of another generation is dropped and counted (stale).
//      A compute_cmd for the NEXT parameter version (sent early, while the shards still apply
//      the previous step) is gathered at once and parked; go_step(step) computes it. So the
//      gather is off the step's critical path. The parked slice keeps its rows in a buffer of
//      its own: a slice computed while it waits (a step that runs again after a failure, whose
//      commands may come after the next step's early ones) must not overwrite them.
//   3. the device or model cannot be built: quit with an input failure; the group supervisor
//      sees the down message and reports worker_down(kind = input) to the job.
//   4. exit from the supervisor (release) or a failure while computing: the supervisor reports
//      worker_down(kind = crash) unless the job released it.
#include <memory>
#include <optional>
#include <vector>

#include "actors/common/caf_compat.hpp"
#include "actors/common/generation_gate.hpp"
#include "actors/common/payloads.hpp"

namespace troupe::actors {

struct replica_optimizer;  // actors/sync/allreduce_step.hpp
struct local_replica;      // actors/sync/local_step.hpp
class agent_replica;       // actors/agents/remote_device.hpp

// The rows of one slice, copied out of the dataset in the slice's order.
struct gathered_rows {
  std::vector<float> x;
  std::vector<std::int32_t> labels;
  std::vector<float> targets;
  // data.priority: the slice's importance weights and indices (empty without priority).
  std::vector<float> weights;
  std::vector<std::int64_t> indices;
};

struct worker_state {
  static inline const char* name = "device_worker";
  generation_gate gate;
  std::int32_t rank = 0;
  msg::local_ref<worker_setup> setup;
  std::unique_ptr<devices::device> device;
  std::unique_ptr<models::model> model;
  std::shared_ptr<std::vector<float>> grad;  // reused every step (the job holds it until applied)
  std::vector<float> block_sum;  // the canonical reduction: scratch for the slice's norm
  gathered_rows rows;            // the slice computed next
  // data.priority: the per-sample losses that go back to the distributor.
  std::vector<float> sample_loss;
  std::optional<msg::compute_cmd> parked;  // gathered, waiting for its parameter version
  gathered_rows parked_rows;               // its rows (swapped with `rows`, never copied)
  double parked_gather_seconds = 0.0;
  // sync: allreduce: this worker's optimizer replica, and which step its gradient holds.
  std::shared_ptr<replica_optimizer> replica;
  // The device's side of a replica that also lives in the agent (worker_setup::replica_in_agent;
  // the device owns it), else null.
  agent_replica* in_agent = nullptr;
  std::int64_t computed_step = -1;
  std::int64_t computed_samples = 0;
  // sync: local: this worker's optimizer replica and samples since the last average.
  std::shared_ptr<local_replica> local;
  // The step whose reduction a `delay` fault already held back (the timer re-sends it once).
  std::int64_t delayed_step = -1;
};

caf::behavior device_worker(stateful<worker_state>* self, caf::actor job, msg::spawn_worker spec,
                            msg::local_ref<worker_setup> setup);

}  // namespace troupe::actors
