#pragma once
// The canonical reduction across processes: a step's gradient is cut into blocks of a fixed
// number of samples in the global order, each block's sum computed by whichever rank held it;
// the result is the sum of every block in block order, divided by the step's samples, with the
// bits of collectives::reduce_into over the blocks in that order (the parameter-server shard's
// and the in-process shared allreduce's float operations). So every rank ends with the same
// bits, and they do not depend on which rank computed which block, how many ranks there are or
// how the blocks were shared out: a fault that moves blocks between ranks leaves them unchanged.
//
// Three rounds over a full mesh (communicator fully_connected):
//   1. every rank tells every other which blocks it holds and their samples (a few words);
//   2. rank j owns segment j of the buffer: every rank sends it, for each of its blocks, that
//      block's segment j; j adds the step's blocks' segments in block order and divides;
//   3. j sends its finished segment to every rank (an allgather; copies, so the bits travel).
// A rank sends (its blocks) x (n - 1) / n of a buffer in round 2 and (n - 1) / n in round 3: with
// one block a rank, the ring allreduce's 2 (n - 1) / n; with more, a buffer a block more.
#include <cstdint>
#include <vector>

#include "collectives/options.hpp"
#include "core/span.hpp"

namespace troupe::collectives {

struct block_allreduce_options : op_options {
  std::size_t count = 0;             // floats of each block sum and of `out`
  std::vector<const float*> blocks;  // this rank's block sums (any number, none too)
  std::vector<std::uint32_t> index;  // each one's place in the step's block order
  std::uint64_t samples = 0;         // the samples this rank's blocks hold
  span<float> out;                   // count floats: the mean over every rank's blocks
};

struct block_allreduce_result {
  std::uint64_t total_samples = 0;
  std::uint32_t blocks = 0;      // the step's, all ranks together
  std::uint64_t wire_bytes = 0;  // what all ranks sent together in this op
};

// Every member calls it with the same count. Throws input_error for bad options (this rank's),
// collective_error(protocol) when the ranks' blocks do not make one step (a block held twice or
// by nobody, no samples), and the transports' collective_error (deadline, abort, peer gone).
block_allreduce_result block_allreduce(const block_allreduce_options& options);

}  // namespace troupe::collectives
