#pragma once
// The agent's side of a worker whose replica lives in the agent (`sync: allreduce` with the
// replicated optimizer, actors/sync/process_ring.hpp): the parameters, the optimizer, the gradient
// kept since the last reduction, and this worker's ring to the control process and the other
// agent members. One per hosted worker, used by its serving thread only.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "actors/sync/process_ring.hpp"
#include "collectives/communicator.hpp"
#include "collectives/op_control.hpp"
#include "collectives/store.hpp"
#include "models/optimizer.hpp"

namespace troupe::actors {

// What one reduction asks of the agent (remote_wire::ring_head, decoded).
struct ring_turn {
  std::string prefix;
  std::uint64_t job = 0;
  std::uint64_t generation = 0;
  std::int64_t step = 0;
  int rank = 0;
  int size = 0;
  ring_transport transport = ring_transport::tcp;
  bool contributed = false;
  std::int64_t samples = 0;
  std::int64_t total_samples = 0;
  double deadline_seconds = 0.0;
  std::uint64_t block = 0;  // > 0: the canonical reduction of the kept blocks
};

class hosted_replica {
 public:
  // `codec`: sync.codec of the ring ("" for none); throws input_error when unknown.
  hosted_replica(models::optimizer_spec spec, std::size_t params, const std::string& codec = "");
  ~hosted_replica();
  hosted_replica(const hosted_replica&) = delete;
  hosted_replica& operator=(const hosted_replica&) = delete;

  // The replica from the control process. Throws input_error when the state does not fit this
  // optimizer (names the count or the buffer).
  void load(std::vector<float> params, std::int64_t steps, std::vector<std::vector<float>> buffers);
  bool loaded() const { return loaded_; }
  const float* params() const { return params_.data(); }

  // Where a slice of `step` writes its gradient sum; keep() then folds it into the step's kept
  // gradient (the first slice is written in place).
  float* slice_gradient(std::int64_t step);
  void keep(std::int64_t step);
  // The canonical reduction: where a slice of `step` writes its `blocks` block sums, the first
  // being the step's block `first`; they are kept as written (a second slice's are kept beside
  // the first's). Valid until the next call.
  float* slice_blocks(std::int64_t step, std::uint64_t first, std::size_t blocks);

  // Joins the ring of `t` (connecting when it is another ring than the last), reduces the kept
  // gradient, applies the mean. Returns the ring's seconds. Throws collective_error (the ring)
  // or runtime_failure (the sample count); either way the replica must be loaded again.
  double reduce(const ring_turn& t, collectives::store& store, const std::string& data_host,
                std::shared_ptr<const collectives::abort_signal> abort);
  // The control process gave up the ring named `prefix` (a member of it was lost): a reduction
  // in it fails now, or at once if it has not begun, instead of waiting for a peer that may
  // never send (a cut-off agent keeps its sockets open). Called from any thread.
  void abort_ring(const std::string& prefix);

 private:
  models::optimizer_spec spec_;
  std::size_t count_;
  std::unique_ptr<models::optimizer> optimizer_;
  std::vector<float> params_;
  std::vector<float> kept_;  // count + 1: the gradient sum, then room for the ring's weight
  std::vector<float> scratch_;
  std::vector<float> kept_blocks_;         // the canonical reduction: count each, in kept order
  std::vector<std::uint32_t> kept_index_;  // each one's place in the step's block order
  std::int64_t kept_step_ = -1;
  bool loaded_ = false;
  std::string ring_prefix_;
  collectives::communicator ring_;
  ring_codec codec_;  // its error feedback spans the worker's link
  std::mutex abort_mu_;
  std::string turn_prefix_;  // the ring of the reduction in progress
  std::shared_ptr<collectives::abort_signal> turn_abort_;
  std::vector<std::string> given_up_;  // rings the control process gave up (the last few)
};

}  // namespace troupe::actors
