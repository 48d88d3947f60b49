#pragma once
// group_supervisor: one per resource group (devices of one kind on one host). Spawns the
// device_workers that jobs ask for on its devices, monitors them, and reports a worker that dies
// to its job. Restart with intensity/backoff and escalation to migration are issue 5: the hook
// is on_down below, which today always reports to the job.
//
// State machine per supervised worker:
//
//   (none) --1--> RUNNING --2--> (none)
//                   \--3--> DOWN_REPORTED --> (none)
//
//   1. spawn_worker(job, epoch, rank, device) + worker_setup from a job: spawn the worker
//      detached, monitor it, reply with its handle.
//   2. release(job, epoch) from the job: forget the job's workers first (so their exit is not a
//      failure), then stop them.
//   3. down_msg of a supervised worker: worker_down(job, epoch, rank, kind, reason) to its job
//      (kind = input when it could not build its device or model, crash otherwise).
//
// The group registers itself with the task manager when it starts (register_group).
#include <map>
#include <string>

#include "actors/caf_compat.hpp"
#include "actors/payloads.hpp"
#include "core/config.hpp"

namespace troupe::actors {

struct supervised_worker {
  caf::actor job;
  msg::spawn_worker spec;
};

struct group_state {
  static inline const char* name = "group_supervisor";
  config::group_config group;
  std::map<caf::actor_addr, supervised_worker> workers;
  std::map<caf::actor_addr, caf::actor> handles;  // keeps workers alive until released
};

caf::behavior group_supervisor(stateful<group_state>* self, config::group_config group,
                               caf::actor task_manager);

}  // namespace troupe::actors
