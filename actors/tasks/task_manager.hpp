#pragma once
// task_manager: one per cluster. Owns the group supervisors, the job queue and the device
// allocation; starts jobs by priority, dependencies (`after:`) and resource demands
// (policies/scheduling.hpp: uniform or resource-state placement, admission by priority and
// dependencies), and releases a job's devices when it ends. A job asks for every device of the
// groups it names (all groups when it names none).
//
// Job lifecycle as the task manager sees it:
//
//   QUEUED --1--> RUNNING --2--> COMPLETED | FAILED | CANCELLED | INTERRUPTED
//     |  \--3--> CANCELLED                 ^
//     \--4------------------------------->/ (FAILED)
//   RUNNING --5--> FAILED
//   QUEUED --6--> INTERRUPTED
//   RUNNING --7--> QUEUED
//
//   1. a scheduling pass (after every submit, job end and priority change) admits it: its
//      devices are marked busy and the job actor is spawned with them.
//   2. job_finished from the job actor: its devices are free again, its report is kept, and the
//      queue is scheduled again (a job that waited for those devices starts now).
//   3. a dependency failed or was cancelled; or drain for a queued job; or, once the runtime
//      waits, nothing runs and the job still cannot start (a dependency that was never
//      submitted, a demand the cluster can never meet).
//   4. its demand names a group that does not exist, or exceeds the cluster (bad input).
//   5. the job actor died without a job_finished (a bug): failed, devices freed.
//   6. the run stops (interrupt_atom, runtime::interrupt): queued jobs never start; running ones
//      get drain with `interrupt` and end INTERRUPTED at their next step boundary (edge 2).
//   7. preemption: a queued job that cannot be placed while a `preemptible` job of lower
//      priority holds devices it could use drains that job (interrupt: a last checkpoint at the
//      step boundary); when it ends INTERRUPTED it is queued again (RUNNING --7--> QUEUED) with
//      its own checkpoints to resume from, in its old place in the queue.
//
// Agents' groups come and go while jobs run: group_up_atom from the registry hands a joined
// group to the elastic jobs waiting for it; (group_leave_atom, group), an agent draining or
// stopping, asks every running job holding the group to let it go at its next step boundary,
// and is answered with how many did.
//
// When nothing is queued or running and the runtime waits, the run report is delivered.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "actors/common/caf_compat.hpp"
#include "actors/common/payloads.hpp"
#include "actors/job/job.hpp"

namespace troupe::actors {

// How a job actor comes to life; tests substitute a fake one. Default: spawn job_actor.
using job_spawner = std::function<caf::actor(caf::event_based_actor* self, job_launch launch)>;

struct task_manager_options {
  config::cluster_config cluster;
  caf::actor metrics_hub;
  steady::time_point run_t0 = steady::now();
  double step_deadline_seconds = 600.0;
  std::string resume_dir;  // --resume: each job continues from its newest valid checkpoint
  job_spawner spawner;     // empty: the real job actor
  // Where groups whose `process` is not local find their agent (null: no listener).
  std::shared_ptr<const agent_directory> agents;
  // A service: a group whose agent has not joined (or was lost) offers no devices, so a job
  // waits for its agents instead of starting without them; a join schedules again.
  bool hold_for_agents = false;
};

struct managed_group {
  config::group_config cfg;
  caf::actor supervisor;
  std::vector<bool> busy;  // by device index
};

struct queued_entry {
  msg::job_id id = 0;
  std::int64_t seq = 0;
  config::job_config cfg;
  std::string resume_dir;  // a preempted job: its own checkpoints (else the run's resume_dir)
};

struct running_entry {
  std::string name;
  queued_entry entry;        // as it was queued: a preempted job is queued again from it
  std::string preempted_by;  // drained for this higher-priority job; queued again when it ends
  caf::actor actor;
  std::vector<std::pair<std::string, std::vector<int>>> held;  // group -> device indices
  bool sharing = false;  // holds a `shared` group: time-sliced with other jobs (share_allocator)
  // Elastic: groups held for the job whose agent has not joined yet; they go to the job when it
  // does. A job with fewer than min_devices present waits here (`deferred`: its launch, no actor).
  std::vector<group_slot> pending;
  std::optional<job_launch> deferred;
};

struct tm_state {
  static inline const char* name = "task_manager";
  task_manager_options opts;
  std::vector<managed_group> groups;
  std::vector<queued_entry> queue;
  std::map<msg::job_id, running_entry> running;
  std::map<std::string, job_status> outcomes;  // by job name
  std::map<std::string, std::string> waiting;  // queued job -> why it waits (last pass)
  std::vector<job_report> reports;             // in order of ending
  std::vector<schedule_event> events;
  std::vector<caf::response_promise> waiters;
  bool sealed = false;       // the runtime waits: a job that can never start is cancelled
  bool interrupted = false;  // the run stops: nothing more starts, running jobs drain
  // cluster.shares: adaptive with a shared group (actors/tasks/share_allocator.hpp); else null.
  caf::actor share_allocator;
  std::map<std::string, double> shares;  // job name -> its current share on shared devices
  std::map<std::string, std::int64_t> share_changes;
  std::map<msg::job_id, double> share_keys;  // fixed: the `share` key of each sharing job
  msg::job_id next_id = 1;
  std::int64_t next_seq = 0;
};

caf::behavior task_manager(stateful<tm_state>* self, task_manager_options opts);

}  // namespace troupe::actors
