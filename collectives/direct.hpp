#pragma once
// Allreduce algorithms in few rounds, for messages where latency rules: a round costs a wake-up
// of the peers, and the ring takes 2 (n - 1) of them. Both need a link to every member
// (communicator fully_connected), and both add the members' values in rank order,
// x0 + x1 + ... + x(n-1), so that every rank holds the same bits, as after the ring.
//
// - one_step_allreduce: every rank sends its whole buffer to every other rank and adds up what
//   it receives. One round; each rank sends (n - 1) times the data.
// - two_step_allreduce: rank j owns segment j of the buffer; every rank sends segment j to rank
//   j (a reduce-scatter in one round), j adds the n parts, and sends the sum to every rank (an
//   allgather in one round). Two rounds; each rank sends 2 (n - 1) / n times the data, as the
//   ring does.
#include <cstdint>

#include "collectives/communicator.hpp"
#include "collectives/options.hpp"
#include "core/span.hpp"

namespace troupe::collectives {

// Uses phase `phase`.
void one_step_allreduce(communicator& comm, span<float> data, const op_tag& tag,
                        std::uint32_t phase, const op_context& ctx, reduce_op op = reduce_op::sum);

// Uses phases `phase` and `phase` + 1.
void two_step_allreduce(communicator& comm, span<float> data, const op_tag& tag,
                        std::uint32_t phase, const op_context& ctx, reduce_op op = reduce_op::sum);

}  // namespace troupe::collectives
