#pragma once
// The job actor's side of checkpoints (actors/checkpoint/checkpoint_cycle.hpp holds when and how
// one capture goes): the snapshot of a step boundary, the parts from the sync mode, the detached
// checkpoint_writer, and resuming from the newest valid checkpoint.
//
// Resume (`troupe run --resume DIR`): DIR/JOBNAME/ is read with load_newest_valid (a torn or
// corrupt newest file is logged and the previous one used); a checkpoint of another job or
// config is refused (input_error naming the file and the first differing key); no checkpoint
// there: the job starts fresh (logged).
#include <functional>
#include <optional>

#include "actors/job/job_state.hpp"

namespace troupe::actors {

// After the model is built (the store holds freshly initialised parameters): reads the resume
// directory if any. Returns the snapshot to continue from, or nothing (fresh start). Throws
// troupe::input_error for a checkpoint of another job or config.
std::optional<job_snapshot> checkpoint_resume(job_self self, std::size_t param_count);
// Puts the snapshot's parameters into the store and its step, pass and statistics into the job.
void checkpoint_restore(job_self self, const job_snapshot& snap);
// Spawns the writer when the job's config asks for checkpoints and the sync mode can take them.
void checkpoint_init(job_self self);
// After step st.step - 1 was applied and st.step bumped: starts a capture when one is due.
void checkpoint_boundary(job_self self);
// True when a write is in flight: `then` runs once it ended (durable or failed).
bool checkpoint_hold(job_self self, std::function<void()> then);
void checkpoint_part(job_self self, const msg::ckpt_part& m,
                     const msg::local_ref<ckpt_shard_part>& part);
void checkpoint_written(job_self self, const msg::ckpt_written& m);

}  // namespace troupe::actors
