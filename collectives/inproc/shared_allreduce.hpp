#pragma once
// The in-process allreduce: in one process buffers are shared between actors, never copied. Ranks
// are threads of one process. Instead of a ring that moves every segment into every rank's own
// buffer (n - 1 allgather copies per rank), the ranks reduce pieces of all ranks' inputs, straight
// from their buffers, into ONE result buffer the group owns (pieces come from a shared counter, so
// ranks that have a core do the work of ranks waiting for one); every rank then reads that shared
// result. Per byte of payload the memory traffic is n reads and one (streaming) write, in one pass
// (collectives/inproc/reduce_kernel.hpp), spread over the ranks' threads.
//
//   shared_allreduce_group group{3};                 // one per group of ranks (per generation)
//   // on each rank's thread:
//   shared_allreduce_options o;
//   o.rank = r; o.data = grad.data(); o.count = n; o.weight = samples;
//   o.divide_by_total_weight = true;                 // the mean gradient of the global batch
//   o.deadline = deadline_in(5s); o.abort = job_abort;
//   auto res = group.allreduce(o);                   // res.values: shared, read-only
//
// Determinism: element i of the result is ((x_0 + x_1) + x_2) ... in rank order, whichever rank
// reduced it and whatever the arrival order; with divide_by_total_weight the division is fused
// into the last addition (the same float operations as the parameter-server shard), so a run is
// bit-for-bit repeatable and equal to `sync: ps`.
//
// Lifetime: a rank's input must stay unchanged until its call returns (the others read it); the
// result stays valid until the same rank's second-next call (two result slots alternate, so a
// caller can hold the results of two consecutive ops at once, e.g. the averaged first moment and
// the max second moment of Max-AdaBelief).
//
// Failure: every wait has the deadline and watches the abort signal (collectives/op_control.hpp).
// A rank that leaves early (abort, deadline, bad count) breaks the group: every waiting and later
// call throws collective_error naming a rank that did not arrive, and a rank returns only once no
// other rank is still reading its input. A broken group is not reused: the next membership
// generation builds a new one.
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "collectives/inproc/rank_group.hpp"
#include "collectives/op_control.hpp"
#include "collectives/options.hpp"
#include "core/span.hpp"

namespace troupe::collectives {

struct shared_allreduce_options {
  int rank = 0;
  const float* data = nullptr;  // null: this rank contributes nothing (as if all zeros for sum)
  std::size_t count = 0;        // the same on every rank; 0 makes the call a barrier
  // Set: the SAME list on every rank (one object, compared by address), summed in its order
  // instead of the ranks' `data` (sum only); each input holds `count` floats and stays unchanged
  // until every rank returned. The canonical reduction passes its block sums in block order, so
  // the result does not depend on which member computed which block.
  const std::vector<const float*>* inputs = nullptr;
  reduce_op op = reduce_op::sum;
  double weight = 0.0;  // summed over the ranks (sample counts); returned as total_weight
  // result = sum / total_weight (sum only), with the division fused into the last addition.
  bool divide_by_total_weight = false;
  steady::time_point deadline = steady::time_point::max();
  std::shared_ptr<const abort_signal> abort;
  std::shared_ptr<const abort_signal> gone;  // op_context::gone
  // sum only, and the same on every rank: also |result|^2, each piece's part computed by the
  // rank that reduced it while the piece is still in its cache, so nobody makes a pass of its
  // own over the result (the job's gradient-noise statistics want it every step).
  bool sq_norm = false;
  // A step applied with the reduction, piece by piece: every rank passes hooks that do the same
  // (rank 0's are run). on_open runs once, by the last rank to arrive, before any piece is
  // reduced; on_piece(result, lo, n) then runs on each piece [lo, lo + n) of the result by the
  // rank that reduced it, while the piece is in its cache (`result` is the whole buffer).
  // With on_piece the op is committed once every rank has arrived: from then on no abort or
  // deadline stops it, so that every piece is done and every rank returns success (the work
  // left is pure compute, bounded). Before that, an abort leaves no piece done.
  std::function<void()> on_open;
  std::function<void(const float* result, std::size_t lo, std::size_t n)> on_piece;
};

struct shared_allreduce_result {
  span<const float> values;  // the group's result buffer: read only
  double total_weight = 0.0;
  // |values|^2 when the call asked for it (0 otherwise): the pieces' parts added in piece
  // order, so every rank gets the same bits whichever rank reduced which piece.
  double sq_norm = 0.0;
};

class shared_allreduce_state;

// This class is thread-safe: rank r calls allreduce from its own thread only.
class shared_allreduce_group : public rank_group {
 public:
  explicit shared_allreduce_group(int size);
  ~shared_allreduce_group();

  shared_allreduce_result allreduce(const shared_allreduce_options& options);
  // Ranks waiting inside the current op right now (tests use it to abort an op in flight).
  int waiting() const;
  bool broken() const;

 private:
  std::unique_ptr<shared_allreduce_state> state_;
};

}  // namespace troupe::collectives
