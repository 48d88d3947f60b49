#pragma once
// A device that computes in an agent (a group with `process: separate` or `agent`). To its
// device_worker it is a device like any other, so everything the worker does (slices, faults,
// the ps and local modes, checkpoints, evaluation, probes) works unchanged; only the
// forward/backward runs in the agent's process, on the agent's cores. In `sync: allreduce` with
// the replicated optimizer the worker's replica lives in the agent too (agent_replica below).
//
// Making one asks the agent (host_worker over CAF's middleman, answered within a deadline) to
// build the device and the model, then both ends connect a two-rank communicator through the
// run's rendezvous store: ZeroMQ ipc when the agent runs on this host, tcp otherwise. A step
// call sends the parameters and the gathered rows and waits for the gradient sum; with the
// replica in the agent, only the rows (actors/agents/remote_wire.hpp). Tensors never ride in CAF
// messages.
//
// Every wait has a deadline and ends early when the worker's incarnation is cancelled (the job
// declared it hung) or the registry lost the agent; a failure is a runtime_failure naming the
// agent, which the supervisor classifies and handles like any worker's crash.
#include <cstdint>
#include <memory>
#include <string>

#include <caf/fwd.hpp>

#include "actors/common/payloads.hpp"
#include "actors/sync/process_ring.hpp"

namespace troupe::actors {

// What a remote device offers beside run_step and run_eval when its worker's replica lives in
// the agent (worker_setup::replica_in_agent): the parameters and optimizer state go down once,
// each step sends only rows, and the agent joins the step's process ring with the gradient it
// kept. Every call throws runtime_failure naming the agent, as run_step does.
class agent_replica {
 public:
  virtual ~agent_replica() = default;
  // The agent holds this worker's replica: sent over this link, and no reduction failed since.
  virtual bool synced() const = 0;
  virtual void sync(const float* params, std::size_t count,
                    const models::optimizer_state& optimizer) = 0;
  // A slice of `step` computed on the agent's replica; the gradient stays there.
  // `grad_sq`: |gradient sum of the slice|^2. `block` > 0: the canonical reduction's, the agent
  // keeps one sum per block, the slice's first being the step's block `first_block`.
  virtual models::step_stats kept_step(std::int64_t step, const models::batch& b,
                                       devices::step_timing* timing, double* grad_sq,
                                       std::size_t block = 0, std::uint64_t first_block = 0) = 0;
  // The agent's part in the reduction of `step` (its start posts the agent's call, without
  // waiting), and the wait for the agent's answer after it.
  virtual agent_part reduce_part(std::int64_t step, bool contributed, std::int64_t samples,
                                 std::int64_t total_samples, double deadline_seconds) = 0;
  // Waits for the agent's answer to the reduction; `abort` (the job's session) ends the wait.
  virtual void finish_reduce(std::shared_ptr<const collectives::abort_signal> abort) = 0;
  // This side gave up the reduction: the agent stops waiting in its ring (a peer in it may be
  // cut off, and the agent serves this worker's next call only after it).
  virtual void abort_ring() = 0;
  // A reduction failed on this side: the agent's replica may differ; send it again.
  virtual void desync() = 0;
  // Raised when the registry loses the agent.
  virtual std::shared_ptr<const collectives::abort_signal> lost() const = 0;
};

// Throws runtime_failure when the agent cannot be reached or refuses, naming it.
std::unique_ptr<devices::device> make_remote_device(caf::actor_system& sys,
                                                    const worker_setup& setup);

}  // namespace troupe::actors
