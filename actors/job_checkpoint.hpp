#pragma once
// A job's checkpoints (issue 5 part 4): when to take one, collecting the shards' copies, handing
// them to the detached checkpoint_writer, and resuming from the newest valid checkpoint.
//
// Protocol at a step boundary that is due (checkpoint.every_steps and/or every_seconds):
//   1. the job records the step's metadata (step, sampler cursor, pass statistics) and sends
//      ckpt_capture to every shard before anything of the next step reaches them; each shard
//      copies its slice and optimizer state on its own turn (off the job's critical path) and
//      answers ckpt_part.
//   2. with every part in, ckpt_write + the snapshot go to the writer, which encodes, writes,
//      fsyncs, renames and prunes on its own thread, then answers ckpt_written.
//   3. the next step computes meanwhile; but the step after the checkpoint is not COMPLETED
//      (published) until the checkpoint is durable. So at any moment the completed steps exceed
//      the newest durable checkpoint by at most one interval: a kill -9 loses at most that, and
//      two writes of one job never overlap.
//
// Resume (`troupe run --resume DIR`): DIR/JOBNAME/ is read with load_newest_valid (a torn or
// corrupt newest file is logged and the previous one used); a checkpoint of another job or
// config is refused (input_error naming the file and the first differing key); no checkpoint
// there: the job starts fresh (logged).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "actors/caf_compat.hpp"
#include "actors/checkpoint_state.hpp"
#include "core/clock.hpp"

namespace troupe {
struct job_report;
}

namespace troupe::actors {

struct job_state;

struct job_ckpt {
  bool enabled = false;  // checkpoint.dir set and an interval > 0 (sync: ps)
  std::string dir;       // checkpoint.dir/JOBNAME
  std::string identity;  // checkpoint_identity() of this job
  caf::actor writer;
  std::int64_t last_step = 0;  // step of the last capture (or of the checkpoint resumed from)
  steady::time_point last_time = steady::now();
  // The capture in flight: parts being collected (pending), then the write.
  bool in_flight = false;
  std::shared_ptr<job_snapshot> pending;
  int parts_missing = 0;
  steady::time_point capture_t0 = steady::now();
  std::function<void()> held;  // what waits for the write (edge 3 above): completing a step
                               // or, after the last step, the evaluation
  // For the report.
  std::int64_t written = 0;
  std::int64_t failed = 0;
  double write_seconds_total = 0.0;
  double write_seconds_max = 0.0;
  double hold_seconds_total = 0.0;  // time completed steps waited for a write
  steady::time_point hold_t0 = steady::now();
  std::optional<std::int64_t> resumed_from;
  std::int64_t durable_step = -1;  // newest checkpoint known to be on disk (-1: none)
};

using job_self = stateful<job_state>*;

// After the model is built (the store holds freshly initialised parameters): reads the resume
// directory if any. Returns the snapshot to continue from, or nothing (fresh start). Throws
// troupe::input_error for a checkpoint of another job or config.
std::optional<job_snapshot> checkpoint_resume(job_self self, std::size_t param_count);
// Puts the snapshot's parameters into the store and its step, pass and statistics into the job.
void checkpoint_restore(job_self self, const job_snapshot& snap);
// Spawns the writer when the job's config asks for checkpoints.
void checkpoint_init(job_self self);
// After step st.step - 1 was applied and st.step bumped: starts a capture when one is due.
void checkpoint_boundary(job_self self);
// True when a write is in flight: `then` runs once it ended (durable or failed), from
// checkpoint_part/written.
bool checkpoint_hold(job_self self, std::function<void()> then);
void checkpoint_part(job_self self, const msg::ckpt_part& m,
                     const msg::local_ref<ckpt_shard_part>& part);
void checkpoint_written(job_self self, const msg::ckpt_written& m);
void fill_checkpoint_report(job_self self, job_report& r);

}  // namespace troupe::actors
