#pragma once
// checkpoint_writer: one per checkpointing job, spawned DETACHED (its own thread) because it
// blocks on fsync. It turns a job_snapshot into checkpoint sections, writes them atomically into
// the job's directory (core/checkpoint: temp file, fsync, rename, directory fsync) and prunes
// all but the newest `keep` checkpoints.
//
// State machine (one state; a mailbox is a queue, so two writes of one job never overlap):
//
//   IDLE --1--> IDLE
//
//   1. (ckpt_write, local_ref<job_snapshot>): encode, write, prune; answer ckpt_written to the
//      sender, with `error` set (and nothing renamed into place) when any of it failed.
#include <cstddef>
#include <string>

#include "actors/common/caf_compat.hpp"

namespace troupe::actors {

struct checkpoint_writer_state {
  static inline const char* name = "checkpoint_writer";
};

caf::behavior checkpoint_writer(stateful<checkpoint_writer_state>* self, std::string dir,
                                std::size_t keep);

}  // namespace troupe::actors
