#pragma once
// job: one per submitted job. Owns the job's parameter-server shards and data distributor, asks
// the group supervisors of its allocation for device workers, and drives the synchronous
// data-parallel step protocol of DESIGN §4 in `sync: ps` mode:
//
//   plan (distributor) -> compute (workers, gradient SUMS) -> reduce (shards: fixed rank order,
//   divide by the total sample count, optimizer) -> applied (all shards) -> version = step + 1
//
// The plan of step s+1 is requested while step s computes, and its slices are sent as soon as it
// arrives: workers gather their rows while the shards apply step s and park them; go_step(s+1)
// starts the compute once version s+1 is in place. The distributor hop and the gather are off
// the critical path. Everything it sends or accepts carries (job, epoch); other epochs are dropped.
//
// State machine:
//
//   LOADING --1--> SPAWNING --2--> PROBING --3--> RUNNING --4--> EVALUATING --5--> DONE
//                      \------------2'------------/   |  \--6--> DONE (cancelled)
//   any --7--> DONE (failed)                          \--8--> (watchdog)
//
//   1. the distributor answered the data: build the model, initialise the parameters from the
//      seed, spawn the shards, ask each supervisor of the allocation for its workers.
//   2. every worker is ready and the split needs measuring (weighted, no config weights, not
//      deterministic): send each a probe; 2'. weights known (even split, config weights, or
//      device capabilities in deterministic mode): straight to RUNNING.
//   3. every probe answered: weights = 1 / seconds per sample; send them to the distributor.
//   4. the stop condition holds after a step (steps of all epochs, max_steps or max_seconds):
//      send each worker its share of the test set.
//   5. every evaluation answered: report, release the workers, job_finished to the task
//      manager and the metrics hub, stop the shards and the distributor, quit.
//   6. drain from the task manager: stop at the next step boundary, report `cancelled`.
//   7. an error answer, the watchdog, or a worker failure that cannot be handled (input, the
//      fail-job policy, sync: allreduce, outside RUNNING): report `failed` (bad_input when the
//      cause was the user's input), release, quit. In RUNNING a worker failure is handled
//      (actors/job_membership.hpp): its slices are re-planned over the other members, it is
//      restarted or its share migrated, and the job goes on in a new membership epoch.
//   8. the watchdog fires every step_deadline seconds; no progress since the last one is edge 7.
// Checkpoints (actors/job_checkpoint.hpp) ride inside RUNNING: a due step boundary captures the
// shards' state; the following step is completed only once that checkpoint is durable. With
// --resume, edge 1 loads the newest valid checkpoint and RUNNING starts at its step.
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/caf_compat.hpp"
#include "actors/epoch_gate.hpp"
#include "actors/job_checkpoint.hpp"
#include "actors/job_membership.hpp"
#include "actors/job_stats.hpp"
#include "actors/payloads.hpp"
#include "core/clock.hpp"
#include "models/batch.hpp"

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

class job_allreduce;  // actors/allreduce_step.hpp
class local_sync;     // actors/local_step.hpp

enum class job_phase { loading, spawning, probing, running, evaluating, done };

struct worker_slot {
  std::string name;  // GROUP/INDEX
  std::string group;
  std::string device;
  caf::actor actor;
  bool ready = false;
  double capability = 1.0;
  std::int64_t samples = 0;
  std::int64_t steps = 0;
  double compute_seconds = 0.0;
};

struct job_state {
  static inline const char* name = "job";
  job_launch launch;
  epoch_gate gate;
  job_phase phase = job_phase::loading;
  caf::actor distributor;
  std::vector<caf::actor> shards;
  std::shared_ptr<job_allreduce> allreduce;  // sync: allreduce and local (then no shards)
  std::shared_ptr<local_sync> local;         // sync: local: the averaging schedule
  bool local_averaging = false;              // sync: local: the step in flight averages
  std::vector<worker_slot> workers;
  data_bundle data;
  std::shared_ptr<const models::model> prototype;
  std::shared_ptr<param_store> store;
  // The job's current share on shared devices, read by every worker setup (worker_setup::share).
  std::shared_ptr<std::atomic<double>> share = std::make_shared<std::atomic<double>>(1.0);
  std::vector<double> weights;
  int answers = 0;  // workers ready / probes / evaluations answered in the current phase
  int eval_expected = 0;
  std::vector<double> probe_seconds;

  // Steps.
  std::int64_t step = 0;  // the step in flight (= parameter version it reads)
  std::int64_t steps_total = 0;
  std::int64_t steps_per_pass = 1;
  std::optional<std::pair<msg::step_plan, msg::local_ref<msg::index_list>>> next_plan;
  msg::step_plan plan;
  int pending_done = 0;
  int pending_applied = 0;
  double step_grad_sq = 0.0;  // ps: the shards' parts of |G_B|^2 of this step
  std::vector<std::shared_ptr<const msg::grad_buffer>> grads;  // by rank, this step
  models::step_stats step_stats;
  steady::time_point job_t0 = steady::now();
  steady::time_point train_t0 = steady::now();
  steady::time_point step_t0 = steady::now();
  double step_seconds_total = 0.0;
  // Where step time goes: dispatch -> last step_done, reduce -> last applied.
  double compute_phase_seconds = 0.0;
  double reduce_phase_seconds = 0.0;
  steady::time_point reduce_t0 = steady::now();
  std::int64_t samples_total = 0;
  std::int64_t pass = 0;
  models::step_stats pass_stats;  // the current pass over the training set
  models::step_stats eval_stats;
  bool draining = false;
  std::int64_t progress = 0;  // bumped on every answer; the watchdog compares it
  // Issue 6: gradient noise scale, imbalance index and rebalance count; the rebalancer policy
  // actor of `split: adaptive` (actors/rebalancer.hpp).
  job_stats stats;
  caf::actor rebalancer;
  std::int64_t watched_progress = -1;
  job_ckpt ckpt;  // checkpoints and resume (actors/job_checkpoint.hpp)
  // Issue 5: members, the step in flight's owed slices, hang deadline, fault counters.
  membership mem;
};

caf::behavior job_actor(stateful<job_state>* self, job_launch launch);

}  // namespace troupe::actors
