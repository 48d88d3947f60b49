#pragma once
// A device that computes in an agent (a group with `process: separate` or `agent`). To its
// device_worker it is a device like any other, so everything the worker does (slices, faults,
// the allreduce and local replicas, checkpoints, evaluation, probes) works unchanged; only the
// forward/backward runs in the agent's process, on the agent's cores.
//
// Making one asks the agent (host_worker over CAF's middleman, answered within a deadline) to
// build the device and the model, then both ends connect a two-rank communicator through the
// run's rendezvous store: ZeroMQ ipc when the agent runs on this host, tcp otherwise. Each call
// sends the parameters and the gathered rows and waits for the gradient sum
// (actors/remote_wire.hpp); tensors never ride in CAF messages.
//
// Every wait has a deadline and ends early when the worker's incarnation is cancelled (the job
// declared it hung) or the registry lost the agent; a failure is a runtime_failure naming the
// agent, which the supervisor classifies and handles like any worker's crash.
#include <memory>
#include <string>

#include <caf/fwd.hpp>

#include "actors/payloads.hpp"

namespace troupe::actors {

// Throws runtime_failure when the agent cannot be reached or refuses, naming it.
std::unique_ptr<devices::device> make_remote_device(caf::actor_system& sys,
                                                    const worker_setup& setup);

}  // namespace troupe::actors
