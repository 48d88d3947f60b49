#pragma once
// job: one actor per submitted job. It loads the data, asks the group supervisors of its
// allocation for device workers, and drives the synchronous data-parallel step:
//
//   plan (distributor) -> compute (workers, gradient SUMS) -> reduce (the sync mode, behind
//   actors/sync/job_sync.hpp) -> applied -> parameters at version step + 1
//
// The plan of step s+1 is requested while step s computes, and its slices are sent as soon as it
// arrives: workers gather their rows while step s is reduced and park them; go_step(s+1) starts
// the compute once version s+1 is in place. Everything the job sends or accepts carries
// (job, generation); messages of another generation are dropped
// (actors/common/generation_gate.hpp).
//
// Phases. Each is one CAF behavior (actors/job/job.cpp): a message that is not valid in a phase is
// not matched there and is dropped; messages every phase answers (the watchdog, share updates,
// a drain, a lost worker, queries) are one shared handler.
//
//   LOADING --1--> SPAWNING --2--> PROBING --3--> RUNNING --4--> EVALUATING --5--> DONE
//                      |                           ^   |
//                      +-------------2'------------+   +--6--> DRAINING --6'--> DONE
//
//   any --7--> DONE (failed)             any --8--> the watchdog (no progress: edge 7)
//
//   1. the distributor answered the data: build the model, initialise the parameters from the
//      seed (or a checkpoint with --resume), choose the sync mode (job_sync), ask each
//      supervisor of the allocation for its workers.
//   2. every worker is ready and the split needs measuring (weighted, no config weights, not
//      deterministic): send each a probe; 2'. weights known (even split, config weights, or
//      device capabilities in deterministic mode): straight to RUNNING.
//   3. every probe answered: weights = 1 / seconds per sample; send them to the distributor.
//   4. the stop condition holds at a step boundary (steps of all epochs, max_steps or
//      max_seconds): send each member its share of the test set. 4': when a checkpoint is being
//      written the evaluation waits for it (actors/checkpoint/checkpoint_cycle.hpp).
//   5. every evaluation answered: report, release the workers, job_finished to the task
//      manager and the metrics hub, stop the sync mode's actors and the distributor, quit.
//   6. drain from the task manager: finish the step in flight (6') and report `cancelled`; in
//      any phase before RUNNING the job is cancelled at once. A drain with `interrupt` (the run
//      stops: runtime::interrupt, SIGTERM) takes a checkpoint at that boundary first, whatever
//      the interval (in sync: local only if an average just happened), waits until it is
//      durable, and reports `interrupted`.
//   7. an error answer, the watchdog, or a worker failure that cannot be handled (bad input, the
//      fail-job policy, a sync mode that cannot lose a member, in LOADING, or in EVALUATING with
//      no other member left to take its share of the test set): report
//      `failed` (bad_input when the cause was the user's input), release, quit. In RUNNING a
//      worker failure is handled (actors/job/membership.hpp): its slices are re-planned over the
//      other members, it is restarted or its share migrated, and the job goes on in a new
//      generation. In SPAWNING and PROBING the job starts without that worker, and its failure
//      (and a restarted incarnation's ready) is replayed on entering RUNNING, where the
//      membership decides as for any failure. In EVALUATING its share of the test set goes to
//      another member (actors/job/job_evaluation.hpp).
//   8. the watchdog fires every step_deadline seconds; no progress since the last one is edge 7.
#include <string>
#include <vector>

#include "actors/common/caf_compat.hpp"
#include "actors/common/messages.hpp"
#include "core/clock.hpp"
#include "core/config.hpp"

namespace troupe::actors {

// The groups (and device indices in them) the task manager gave a job.
struct group_slot {
  config::group_config group;
  caf::actor supervisor;
  std::vector<int> devices;
};

struct job_launch {
  msg::job_id id = 0;
  config::job_config cfg;
  std::vector<group_slot> slots;
  caf::actor task_manager;
  caf::actor metrics_hub;
  steady::time_point run_t0 = steady::now();
  double step_deadline_seconds = 600.0;  // no step (or setup phase) may take longer
  std::string resume_dir;                // --resume DIR: continue from DIR/JOBNAME/ (if any)
};

struct job_state;

caf::behavior job_actor(stateful<job_state>* self, job_launch launch);

}  // namespace troupe::actors
