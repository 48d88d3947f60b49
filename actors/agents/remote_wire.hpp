#pragma once
// The data plane between a worker's remote device (control process,
// actors/agents/remote_device.hpp) and the agent that computes for it
// (actors/agents/worker_host.hpp): one two-rank communicator (collectives/) per worker incarnation,
// rank 0 the control process, rank 1 the agent. A call is a fixed-size request head, then its
// tensors as raw frames; the answer is a fixed-size reply head, then its tensors. Every frame is
// tagged with the call's number (`op`) and its part
// (`phase`), so a part can never be taken for another. Both ends run the same Troupe version
// (the agent's hello is refused otherwise), so the heads are plain structs copied as bytes;
// a frame of another size is a protocol error that names the peer and closes the link.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "collectives/peer_link.hpp"
#include "collectives/zmq/zmq_link.hpp"

namespace troupe::actors::remote_wire {

// step: parameters and rows down, the gradient sum back. eval: parameters and rows down.
// When the worker's replica lives in the agent (sync: allreduce, replicated optimizer):
// sync: the parameters and optimizer state down, to become the agent's replica;
// kept_step: rows down, computed on the agent's replica, the gradient kept there (added to the
//   kept one when a second slice of the same step comes; under the canonical reduction, one
//   sum per block, kept by the block's place in the step);
// reduce: the agent joins the step's process ring with its kept gradient and applies the mean
//   to its replica (actors/sync/process_ring.hpp).
enum class call_kind : std::uint32_t { step = 1, eval = 2, sync = 3, kept_step = 4, reduce = 5 };

// What a request carries beside the rows (bits of request_head::flags).
constexpr std::uint32_t has_labels = 1u << 0;
constexpr std::uint32_t has_targets = 1u << 1;
constexpr std::uint32_t has_weights = 1u << 2;  // importance weights, one per row
constexpr std::uint32_t wants_sample_loss = 1u << 3;

struct request_head {
  std::uint32_t kind = 0;  // call_kind
  std::uint32_t flags = 0;
  std::uint64_t rows = 0;
  std::uint64_t features = 0;  // floats per row
  std::uint64_t params = 0;    // the model's parameter count
  double start_lag_seconds = 0.0;
  double share = 1.0;      // this job's weight on a shared device
  std::int64_t step = -1;  // kept_step: the step the gradient belongs to
  // step: rows per block of the canonical reduction (devices::device::run_blocks); the reply
  // then carries ceil(rows / block) gradient sums of `params` floats. 0: one sum of all rows.
  // kept_step: the agent keeps one sum per block, the first being the step's block
  // `first_block`.
  std::uint64_t block = 0;
  std::uint64_t first_block = 0;
};

// sync: after the parameters, the optimizer's step count and its state buffers (each one frame
// of `params` floats, in the optimizer's own order).
struct optimizer_head {
  std::int64_t steps = 0;
  std::uint64_t buffers = 0;
};

// reduce: the step's ring (actors/sync/process_ring.hpp ring_plan) and this member's part in it;
// the ring's key prefix follows as a frame of `prefix_bytes`.
struct ring_head {
  std::uint64_t job = 0;
  std::uint64_t generation = 0;
  std::int64_t step = 0;
  std::int32_t rank = 0;
  std::int32_t size = 0;
  std::uint32_t transport = 0;    // actors/sync/process_ring.hpp ring_transport
  std::uint32_t contributed = 0;  // the kept gradient is this step's and counts
  std::int64_t samples = 0;
  std::int64_t total_samples = 0;  // the step's, checked against the ring's sum
  double deadline_seconds = 0.0;
  std::uint64_t prefix_bytes = 0;
  std::uint64_t block = 0;  // ring_plan::block: > 0, the canonical reduction of the kept blocks
};

struct reply_head {
  double loss_sum = 0.0;
  std::uint64_t samples = 0;
  std::uint64_t correct = 0;
  double compute_seconds = 0.0;
  double gate_wait_seconds = 0.0;
  std::uint64_t error_bytes = 0;  // > 0: the call failed; the error text follows
  double grad_sq = 0.0;           // kept_step: |gradient sum|^2 of the kept slice
  double ring_seconds = 0.0;      // reduce: the ring's part of the call
};

// The parts of a call, in the order they are sent.
enum phase : std::uint32_t {
  request = 1,
  params = 2,
  rows = 3,
  labels = 4,
  targets = 5,
  weights = 6,
  optimizer = 7,
  ring = 8,
  ring_prefix = 9,
  reply = 11,
  gradient = 12,
  sample_loss = 13,
  error_text = 14,
  optimizer_buffers = 100,  // buffer i of the optimizer state is part 100 + i
};

inline collectives::message_header tag(std::uint32_t call, std::uint32_t part,
                                       std::uint64_t bytes = 0) {
  collectives::message_header h;
  h.job = 1;
  h.generation = 1;
  h.op = call;
  h.phase = part;
  h.bytes = bytes;
  return h;
}

// One end of a worker's link (rank 0: the control process, rank 1: the agent), met under `prefix`
// in `store`. ipc when `peer_host` (the other end's host name) is this host and the agent's data
// address is loopback (the same host name in another network namespace is another host); tcp
// bound on `bind_host` otherwise. Both ends decide with this one rule, so they choose alike.
collectives::zmq_connect_options link_options(
    int rank, const std::string& prefix, collectives::store& store, const std::string& peer_host,
    const std::string& agent_data_host, const std::string& bind_host, steady::duration within);

// Receives one plain struct as the whole payload of part `part` of call `call`.
template <class T>
T receive_struct(collectives::peer_link& link, std::uint32_t call, std::uint32_t part,
                 const collectives::op_context& ctx) {
  static_assert(std::is_trivially_copyable<T>::value, "a head is copied as bytes");
  T out;
  link.receive_into(tag(call, part), reinterpret_cast<std::byte*>(&out), sizeof out, ctx);
  return out;
}

}  // namespace troupe::actors::remote_wire
