#pragma once
// parameter_server: one shard of a job's parameters. Shard k owns the contiguous slice
// [offset, offset + count) of the job's flat parameter buffer and its own optimizer instance over
// that slice (optimizers are element-wise, so N shards give the same result as one). The
// parameter version is the number of steps applied.
//
// State machine (one state per membership generation; the shard has no other lifecycle):
//
//   SERVING(generation e, version v)
//     1. reduce_cmd(e, step = v)  -> sum the slices' gradient sums in the command's order (the
//                                    slices' offsets: fixed, not arrival, so bit-for-bit
//                                    repeatable), divide by the total sample count, optimizer
//                                    step, v := v + 1, send applied
//     2. reduce_cmd(e' != e)      -> stale: dropped and counted
//     3. reduce_cmd(e, step != v) -> out of order (a duplicate): dropped and counted
//     4. (start_atom, e')         -> move to generation e' (membership change)
//     5. (query_atom)             -> replies (version, dropped) for tests and reports
//     6. ckpt_capture(step)       -> copy the slice and the optimizer state; answer ckpt_part
//                                    (+ local_ref<ckpt_shard_part>) with the shard's version
//
// The canonical reduction (`deterministic: true`, config::reduction_block): the step's samples
// are cut into blocks of a fixed size in the order the plan drew them, slices are cut at block
// boundaries (data::split_blocks), and a slice's buffer holds one gradient sum per block
// (devices::device::run_blocks). The shard adds the blocks one by one in order, so the sum's
// bits depend only on the blocks, not on which worker computed which, how many slices there
// were or where a failure re-planned them: a run with faults, migrations or another split ends
// with the fault-free run's parameters. Each block's sum must itself come out the same on every
// device that may compute it: true of the cpu and sim devices (one BLAS, the same rows), not
// between a GPU and a CPU.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "actors/common/caf_compat.hpp"
#include "actors/common/generation_gate.hpp"
#include "actors/common/payloads.hpp"
#include "models/optimizer.hpp"

namespace troupe::actors {

struct shard_spec {
  msg::job_id job = 0;
  msg::generation_id generation = 1;
  std::int32_t shard = 0;
  std::size_t offset = 0;
  std::size_t count = 0;
  std::shared_ptr<param_store> params;
  std::shared_ptr<models::optimizer> optimizer;  // sized `count`, owned by this shard only
  std::int64_t version = 0;                      // steps already applied (a resumed job: > 0)
  caf::actor job_actor;                          // receives `applied`
};

struct shard_state {
  static inline const char* name = "parameter_server";
  shard_spec spec;
  generation_gate gate;
  std::int64_t version = 0;
  std::int64_t out_of_order = 0;
  std::vector<float> mean;        // the step's mean gradient over this slice
  std::vector<const float*> ins;  // the step's gradient buffers (kept: no allocation a step)
};

caf::behavior parameter_server(stateful<shard_state>* self, shard_spec spec);

// Even contiguous slices of n parameters over `shards` shards (the first n % shards get one
// more); shards is clamped to [1, n].
std::vector<std::pair<std::size_t, std::size_t>> shard_slices(std::size_t n, int shards);

}  // namespace troupe::actors
