#pragma once
// What a job checkpoint holds and how it maps onto core/checkpoint sections. No CAF here: the
// writer actor encodes, the job decodes on resume, and the unit tests drive both directly.
//
// Sections (besides core's conventional ones: params, sampler, rng, job, config):
//   config_text     the identity lines the fingerprint hashes, so a refusal can name the key
//   opt_kind        optimizer kind; opt_step: its step count (i64)
//   opt/NAME        one optimizer state buffer over ALL parameters: the shards' slices are
//                   concatenated in offset order, so a checkpoint does not depend on ps_shards
//   pass_stats      loss sum (f64 bits), samples, correct of the pass in progress
//   progress        samples trained, and the step seconds (f64 bits) so far
//   members         the workers (GROUP/INDEX device, one a line) of the run that wrote it, so a
//                   resume on another cluster shape can say what changed
//   ledger_pass     the sample ledger's open pass (i64, -1: none); ledger: its counts, one byte
//                   a training sample (data/sample_ledger.hpp). Absent where no ledger is kept.
//   ledger_totals   the ledger's verdicts up to the checkpoint, over every run of the job:
//                   passes checked, samples counted twice, never counted (3 x u64), so that a
//                   run resumed after a kill still accounts for the passes the killed run ended.
//
// The RNG: training draws no random numbers besides the sampler, whose pass p permutation comes
// from rng(seed).fork(p). `rng` holds that stream's initial state and `sampler` the cursor
// {pass, position}; resume recomputes both from (seed, step) and refuses a checkpoint whose
// values differ (a different dataset size, batch or seed).
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/checkpoint.hpp"
#include "core/config.hpp"
#include "data/sample_ledger.hpp"
#include "models/optimizer.hpp"

namespace troupe::actors {

// One shard's copy: its parameter slice and its optimizer's state over that slice.
struct ckpt_shard_part {
  std::size_t offset = 0;
  std::vector<float> params;
  models::optimizer_state optimizer;
};

// Everything a job needs to continue exactly from `step` (parameters at version `step`).
struct job_snapshot {
  std::int64_t step = 0;
  std::string job;
  std::string identity;  // checkpoint_identity(); its fnv1a64 is the config fingerprint
  std::uint64_t pass = 0;
  std::uint64_t position = 0;  // sampler cursor within the pass
  std::array<std::uint64_t, 4> rng{};
  std::string optimizer_kind;
  double pass_loss_sum = 0.0;
  std::uint64_t pass_samples = 0;
  std::uint64_t pass_correct = 0;
  std::uint64_t samples_total = 0;
  double step_seconds_total = 0.0;
  std::vector<std::string> members;  // "GROUP/INDEX device"; empty in an older checkpoint
  bool has_ledger = false;
  std::int64_t ledger_pass = -1;
  std::vector<std::uint8_t> ledger;
  // The ledger's verdicts over every run up to `step` (zeros in a checkpoint from before these
  // counts); `recorded` is not kept.
  data::ledger_totals ledger_totals;
  // Slices in any order; together they must cover [0, parameter count) exactly once.
  std::vector<std::shared_ptr<const ckpt_shard_part>> parts;
};

// The lines of a job config that decide what a checkpoint means (model, data, optimizer, batch,
// seed, parameter count), one "key=value" per line. Not in it: epochs, max_steps, max_seconds,
// the split, resources, sync mode and shards, the checkpoint keys: a resumed run may change
// those (e.g. train longer, or on other devices).
std::string checkpoint_identity(const config::job_config& cfg, std::size_t param_count);
std::uint64_t identity_fingerprint(const std::string& identity);

// The sampler cursor and pass RNG state of `step` (what a snapshot at that step records).
struct sampler_position {
  std::uint64_t pass = 0;
  std::uint64_t position = 0;
  std::array<std::uint64_t, 4> rng{};
};
sampler_position position_of(std::int64_t step, std::int64_t steps_per_pass, std::int64_t batch,
                             std::uint64_t seed);

// Snapshot <-> checkpoint. to_checkpoint throws troupe::runtime_failure when the parts overlap,
// leave a gap, or disagree on the optimizer's buffers or step. from_checkpoint returns one part
// covering everything and throws troupe::runtime_failure naming the file and section when one
// is missing or malformed.
checkpoint to_checkpoint(const job_snapshot& s);
job_snapshot from_checkpoint(const checkpoint& c);

// Refuses (troupe::input_error naming c.source) a checkpoint of another job or config: the
// message names the first identity line that differs. Also checks the parameter count.
void check_belongs(const checkpoint& c, const std::string& job, const std::string& identity);

// optimizer.form: distributed keeps Max-AdaBelief's moments per worker. A checkpoint holds every
// worker's, in one state whose buffers are named "rank<R>/<name>" (R the worker's rank, e.g.
// "rank2/s_max") and whose step is the workers' common step count.
//
// merge_rank_states: the ranks' states (step and buffers each) into that one state. Throws
// troupe::runtime_failure when their steps differ (the workers must have applied the same steps).
// split_rank_states: back, by rank; throws troupe::input_error naming `source` when a buffer's
// name is not of that form.
models::optimizer_state merge_rank_states(
    const std::vector<std::pair<std::int32_t, models::optimizer_state>>& ranks);
std::vector<std::pair<std::int32_t, models::optimizer_state>> split_rank_states(
    const models::optimizer_state& merged, const std::string& source);

// The optimizer state of [offset, offset + count) of a whole-model state.
models::optimizer_state slice_state(const models::optimizer_state& whole, std::size_t offset,
                                    std::size_t count);

}  // namespace troupe::actors
