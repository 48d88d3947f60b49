#pragma once
// Allreduce (sum or max of float32) over any transport. On a communicator linked to every
// member, small and middle-sized buffers go in one or two rounds (direct.hpp: latency rules
// them); anything else takes the ring: reduce-scatter then allgather, chunked and pipelined
// (ring.cpp). Every member calls it with the same count, on communicators connected alike, so
// that all choose the same algorithm.
//
//   allreduce_options o;
//   o.comm = &comm; o.job = job; o.generation = generation; o.data = gradient;
//   o.deadline = deadline_in(5s); o.abort = job_abort;   // abort from another thread
//   allreduce(o);                                        // throws collective_error naming a peer
#include <cstdint>

#include "collectives/options.hpp"
#include "core/span.hpp"

namespace troupe::collectives {

struct allreduce_options : op_options {
  span<float> data;  // in: this rank's values; out: the sum (or max) over all ranks
  reduce_op op = reduce_op::sum;
  // Where every member is linked (fully_connected), buffers of up to one_step_bytes take the
  // one-round algorithm and up to two_step_bytes the two-round one (direct.hpp); larger ones and
  // sparser communicators take the ring. 0 turns a form off. The defaults are where each form
  // stopped winning with 4 ranks on a 2-core host, over shm and over ZeroMQ ipc alike
  // (docs/PERFORMANCE.md).
  std::size_t one_step_bytes = std::size_t{16} << 10;
  std::size_t two_step_bytes = std::size_t{256} << 10;
};

void allreduce(const allreduce_options& options);

// The bytes that all members send together in one allreduce of `bytes` over `ranks` members
// linked by default_peers, with `options`' thresholds: n (n - 1) times the buffer in one step,
// 2 (n - 1) times it in two steps or by the ring.
std::uint64_t allreduce_wire_bytes(std::uint64_t bytes, int ranks,
                                   const allreduce_options& options = {});

}  // namespace troupe::collectives
