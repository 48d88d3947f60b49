#pragma once
// `sync: allreduce` across processes: the reducer of a generation with members whose replica
// lives in an agent (a group with `process: separate` or `agent`, replicated optimizer).
//
// Such a member keeps its parameters, its optimizer and its gradient in the agent; only rows go
// down to it each step. The step's reduction is two-level, the shape of the hierarchical
// allreduce:
//
//   1. inside the control process, every member (local workers with their gradient sums; the
//      workers of agents with nothing) meets in the shared allreduce: the local sum;
//   2. a ring allreduce (ring_transport below: shm, ZeroMQ ipc or tcp) among the control process
//      (ring rank 0, contributing the local sum, by way of generation rank 0) and every agent
//      member (ring ranks 1..k, in generation rank order, contributing its kept gradient). The
//      sample count rides as one extra element, so the ring carries sums and weight together
//      (with sync.codec it goes in an exact allreduce of its own: ring_codec);
//   3. every ring rank divides by the total; in the control process rank 0 hands that result to
//      the others through the shared group again (one input: copied bit for bit).
//
// Every ring rank then holds the same bits (the ring's allgather copies them), so the agents'
// replicas and the control process's (which the job's checkpoints, evaluation and report read)
// apply the same optimizer to the same mean gradient and stay bit-identical. Against a run in
// one process the sums are taken in another order: equal within float rounding, not in bits.
//
// The canonical reduction (`deterministic: true`, config::reduction_block) takes another path:
// every process keeps one gradient sum per block of the step's samples, and the ring ranks add
// all of the step's blocks in block order (collectives/block_allreduce.hpp, over a full mesh)
// instead of each adding its own sum. The mean then has the bits of the same step in one process
// or under `ps`, whoever computed which block: a fault that moves blocks leaves them unchanged.
//
// Per step a process sends 2(k)/(k+1) of the model over the ring instead of the control process
// sending the parameters down and taking the gradient up for every agent member.
//
// The ring is connected on first use in each generation, through the run's rendezvous store,
// under keys that name the job, the generation and this process; a new generation makes a new
// reducer and so a new ring. Every wait carries the session's deadline and abort signal.
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "actors/sync/allreduce_step.hpp"
#include "collectives/block_allreduce.hpp"
#include "collectives/codecs/codec.hpp"
#include "collectives/store.hpp"
#include "collectives/zmq/zmq_link.hpp"
#include "core/names.hpp"

namespace troupe::actors {

// Where the control process's ring rank can meet an agent member: offered by that member's
// remote device before each reduction.
struct ring_endpoint {
  std::shared_ptr<collectives::store> store;  // the run's rendezvous store
  bool ipc = false;       // the member's own link is ipc (its agent is on this host)
  std::string bind_host;  // tcp: the interface the control process binds towards the agent
};

// The ring's transport: shm when every agent member's own link is ipc (on this host, joined
// over loopback) and the kernel lets processes of one user read each other's memory (Yama's
// ptrace_scope 0 or absent); ZeroMQ ipc in that case otherwise; ZeroMQ tcp as soon as one
// agent member's link is tcp.
enum class ring_transport : std::uint32_t { tcp = 0, ipc = 1, shm = 2 };

// What an agent member needs to join the step's ring.
struct ring_plan {
  std::string prefix;  // the ring's rendezvous keys
  std::uint64_t job = 0;
  std::uint64_t generation = 0;
  int rank = 0;  // the agent's (1..size-1)
  int size = 0;
  ring_transport transport = ring_transport::tcp;
  // > 0: the canonical reduction, in blocks of this many samples (each agent reduces the blocks
  // it kept with block_allreduce, over a full mesh).
  std::uint64_t block = 0;
};

// Connects ring rank `rank` of `size` under `prefix` in `store`; tcp binds on `host`.
// `full_mesh`: a link to every rank (the canonical reduction), else the transports' default.
// `abort` and `gone` end the wait for the other ranks (collectives::rendezvous_options).
collectives::communicator connect_ring(
    ring_transport transport, int rank, int size, const std::string& prefix,
    collectives::store& store, const std::string& host, steady::time_point deadline,
    bool full_mesh = false, std::shared_ptr<const collectives::abort_signal> abort = nullptr,
    std::shared_ptr<const collectives::abort_signal> gone = nullptr);

// A member whose replica lives in an agent: what it offers, and how it sends its agent into the
// ring once the plan is known (a non-blocking post).
struct agent_part {
  ring_endpoint endpoint;
  std::function<void(const ring_plan&)> start;
};

// The control process's ring timings, kept across generations for the report.
struct ring_record {
  mutable std::mutex mu;
  int ranks = 0;
  std::string transport;        // "shm", "ipc" or "tcp"
  std::string codec;            // "" for none
  std::uint64_t bytes = 0;      // per reduction: (parameters + 1) x 4
  std::uint64_t sent = 0;       // with a codec: what rank 0 sent in the last reduction
  std::uint64_t wire = 0;       // canonical: what all ranks sent, over every reduction
  std::vector<double> seconds;  // each reduction's ring part, as rank 0 of the ring saw it
};

// `agent[r]`: member r's replica lives in an agent. At least one must. `prefix` names the ring's
// keys (unique per job, generation and control process). `codec`: sync.codec ("" for none).
// `block` > 0: the canonical reduction in blocks of that many samples (the members' calls then
// carry the control process's blocks, reduce_call::blocks; no codec).
std::shared_ptr<step_reducer> make_process_ring_reducer(
    std::vector<bool> agent, std::uint64_t job, std::uint64_t generation, std::string prefix,
    std::shared_ptr<ring_record> record, const std::string& codec = "", std::uint64_t block = 0);

// sync.codec on the ring: the gradient sums go through the codec (its error feedback kept in
// `state` across steps, per ring rank); the sample count in an exact allreduce of its own.
struct ring_codec {
  std::unique_ptr<collectives::codec> encoding;  // null: no codec
  collectives::codec_state state;
  std::size_t sent_bytes = 0;  // out: this rank's last reduction
};

// The ring rank that reduces `data` (count values + the weight as the last element) in an agent
// or in the control process; divides by the total weight and returns it. Every rank ends with
// the same bits. Throws collective_error.
double ring_reduce_mean(collectives::communicator& ring, std::uint64_t job,
                        std::uint64_t generation, std::vector<float>& data,
                        steady::time_point deadline,
                        std::shared_ptr<const collectives::abort_signal> abort,
                        ring_codec* codec = nullptr,
                        std::shared_ptr<const collectives::abort_signal> gone = nullptr);

// The canonical reduction's ring rank (in an agent or in the control process): adds every rank's
// blocks in block order (collectives::block_allreduce) into `out`, the mean; `blocks` of `count`
// floats each, at `index` in the step's order, holding `samples`. Returns what it reduced (the
// step's samples, all ranks' bytes). Throws collective_error.
collectives::block_allreduce_result ring_reduce_blocks(
    collectives::communicator& ring, std::uint64_t job, std::uint64_t generation,
    std::vector<const float*> blocks, std::vector<std::uint32_t> index, std::uint64_t samples,
    span<float> out, steady::time_point deadline,
    std::shared_ptr<const collectives::abort_signal> abort,
    std::shared_ptr<const collectives::abort_signal> gone);

}  // namespace troupe::actors

namespace troupe {
TROUPE_SPELLINGS(actors::ring_transport, shm, "tcp", "ipc", "shm");
}  // namespace troupe
