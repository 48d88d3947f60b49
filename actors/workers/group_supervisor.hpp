#pragma once
// group_supervisor: one per resource group (devices of one kind on one host). Spawns the
// device_workers that jobs ask for on its devices, monitors them, and decides what happens when
// one fails: restart it in place after a backoff, within a restart
// intensity (at most R restarts in T seconds per worker); past the limit, or when the failure
// class's policy says so, escalate to the job, which migrates the worker's share to the others;
// or fail the job. The class -> policy table is the job's `supervision:` map (worker_setup).
//
// State machine per supervised worker (key: job, rank):
//
//   (none) --1--> RUNNING --2--> (none)
//                   |--3--> FAILED --4--> RUNNING (a new incarnation)
//                   |          \--2--> (none)
//                   \--5--> FAILED
//
//   1. spawn_worker(job, generation, rank, device) + worker_setup from a job: spawn the worker
//      detached, monitor it, reply with its handle.
//   2. release(job, generation) from the job: forget the job's workers and failed workers first (so
//      their exit is not a failure), release hung ones (cancel_token), then stop them.
//   3. down_msg of a supervised worker: classify (input, or policies::classify_message of the
//      reason), decide (policies::decide), answer worker_down(kind, action) to its job; on
//      restart, a restart_worker to self after the backoff (a timer, no sleeping).
//   4. restart_worker(job, rank), from the timer or from the job (it keeps its last member
//      instead of migrating it away): spawn a new incarnation with the same setup and a fresh
//      cancel token; it takes the current parameters and sends worker_ready to the job.
//   5. worker_failed(job, rank, kind) from the job (hang or lost-group, found by its step
//      deadline): release the worker's token, stop it, then as 3 with the job's class.
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "actors/common/caf_compat.hpp"
#include "actors/common/payloads.hpp"
#include "core/clock.hpp"
#include "core/config.hpp"
#include "core/rng.hpp"
#include "policies/supervision.hpp"

namespace troupe::actors {

struct supervised_worker {
  caf::actor job;
  msg::spawn_worker spec;
  msg::local_ref<worker_setup> setup;
};

// How a supervisor starts a worker (tests substitute a light actor for device_worker).
using worker_factory = std::function<caf::actor(caf::event_based_actor* self, caf::actor job,
                                                const msg::spawn_worker& spec,
                                                const msg::local_ref<worker_setup>& setup)>;

struct group_state {
  static inline const char* name = "group_supervisor";
  using key = std::pair<msg::job_id, std::int32_t>;  // job, rank
  config::group_config group;
  worker_factory factory;
  std::shared_ptr<const agent_directory> agents;  // remote groups only
  std::map<caf::actor_addr, supervised_worker> workers;
  std::map<caf::actor_addr, caf::actor> handles;  // keeps workers alive until released
  std::map<key, supervised_worker> failed;        // the last incarnation of a failed worker
  std::map<key, policies::restart_intensity> intensity;
  std::map<key, rng> jitter;
  std::map<key, int> crash_loop;  // failures in a row without a computed slice between them
  policies::backoff_params backoff;
  steady::time_point t0 = steady::now();
};

caf::behavior group_supervisor(stateful<group_state>* self, config::group_config group);
// A group whose `process` is not local: its workers' devices are in the agent that `agents`
// lists for the group at each spawn and restart (none: the spawn fails as a crash, so the
// supervision policy decides: restart until an agent is back, or migrate).
caf::behavior remote_group_supervisor(stateful<group_state>* self, config::group_config group,
                                      std::shared_ptr<const agent_directory> agents);
// The same with a worker factory (null: device_worker, detached) and backoff parameters.
caf::behavior group_supervisor_with(stateful<group_state>* self, config::group_config group,
                                    worker_factory factory, policies::backoff_params backoff);

}  // namespace troupe::actors
