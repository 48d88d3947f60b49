#pragma once
// In-process payloads that ride beside control messages as msg::local_ref<T> (never
// serialised; actors/common/messages.hpp). They hold the big things (datasets, parameters, models)
// so that actors in one process share buffers instead of copying them (a shared_ptr to one buffer
// is a message; a copy would cost the step).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor.hpp>

#include "actors/common/agent_directory.hpp"
#include "actors/common/fault_injection.hpp"
#include "actors/common/live_metrics.hpp"
#include "actors/common/report.hpp"
#include "core/clock.hpp"
#include "core/config.hpp"
#include "data/dataset.hpp"
#include "devices/device.hpp"
#include "models/model.hpp"
#include "models/optimizer.hpp"
#include "policies/supervision.hpp"

namespace troupe::actors {

struct replica_optimizer;  // actors/sync/allreduce_step.hpp
struct local_replica;      // actors/sync/local_step.hpp

// The flat parameters of one job. Each parameter-server shard writes only its own contiguous
// slice, and only between the step's last step_done and its `applied`; workers read the whole
// buffer only between a compute_cmd and their step_done. The step protocol keeps those windows
// apart, and CAF's mailbox hand-off orders the memory accesses, so no lock is needed.
struct param_store {
  explicit param_store(std::size_t n) : values(n, 0.0f) {}
  std::vector<float> values;
  // The version every shard has reached (= steps applied); written by the job only.
  std::atomic<std::int64_t> version{0};

  // Written by the job only: `version` is published now. Stamped first, so a worker that sees the
  // new version also sees its stamp.
  void publish(std::int64_t v) {
    published_ns_.store(steady::now().time_since_epoch().count());
    version.store(v);
  }
  // Seconds since the last publish: the moment a worker with a parked or prefetched slice could
  // have started the step (step_timing::start_lag_seconds). 0 before any publish; at most a
  // second, so a stale stamp cannot erase a real step.
  double seconds_since_published() const {
    const auto at = published_ns_.load();
    if (at == 0) return 0.0;
    const steady::duration since = steady::now().time_since_epoch() - steady::duration(at);
    return std::clamp(std::chrono::duration<double>(since).count(), 0.0, 1.0);
  }

 private:
  std::atomic<steady::rep> published_ns_{0};  // steady clock ticks since its epoch
};

// The training and test sets after preprocessing, shared read-only by every worker.
struct data_bundle {
  std::shared_ptr<const data::dataset> train;
  std::shared_ptr<const data::dataset> test;
};

// What a device_worker needs to start: its device, a model to clone, the data and the store.
struct worker_setup {
  std::string job_name;
  std::string group;
  devices::device_spec device;
  std::shared_ptr<const models::model> prototype;
  models::model_spec model_spec;  // what the prototype was built from (an agent rebuilds it)
  // A group whose `process` is not local: where the worker finds the agent that computes for
  // it (its supervisor sets it at every spawn), the store included. Null: the device is built in
  // this process.
  std::shared_ptr<const agent_directory> agents;
  data_bundle data;
  std::shared_ptr<param_store> params;
  // sync: allreduce resumed from a checkpoint: the optimizer state every replica starts from
  // (null: a fresh optimizer).
  std::shared_ptr<const models::optimizer_state> resume_optimizer;
  // sync: allreduce (replicated): this rank's optimizer replica, owned by the job (so that a
  // rank joining later can be given a member's state); null: the worker makes its own.
  std::shared_ptr<replica_optimizer> optimizer_replica;
  // sync: local: this rank's optimizer replica and training since the last average, owned by
  // the job (a lost member's training joins the next average; a restarted worker goes on with
  // it); null: the worker makes its own.
  std::shared_ptr<local_replica> local_state;
  // `slow` fault entries that target this device (config faults[]): a sim device's slowdown is
  // multiplied by `factor` from `step` to `until_step` (the policy benchmarks' hook; the fault
  // injector leaves `slow` faults to the device).
  std::vector<config::fault_config> slow;
  // `delay` entries that target this device (actors/common/fault_delay.hpp), and the job's sync
  // mode, which says what the delay holds back.
  std::vector<config::fault_config> delay;
  troupe::sync_mode sync_mode = troupe::sync_mode::ps;
  // The canonical reduction's block (config::reduction_block): a slice's gradient is one sum per
  // block of this many rows (devices::device::run_blocks). 0: one sum per slice.
  std::int64_t reduction_block = 0;
  // sync: allreduce with the replicated optimizer in a group that computes in an agent: the
  // worker's replica (parameters and optimizer) lives in the agent too, and the step's
  // reduction is a ring between processes (actors/sync/process_ring.hpp).
  bool replica_in_agent = false;
  models::optimizer_spec optimizer;
  std::string codec;  // sync.codec: of the gradients on the process ring ("" for none)
  // Weight of this job on a shared device (share_gate): one cell per job, which the job sets on
  // every share_update before forwarding it, so that a restarted worker (the supervisor copies
  // this setup) starts from the current share, not from the config's.
  std::shared_ptr<std::atomic<double>> share = std::make_shared<std::atomic<double>>(1.0);
  // data.priority: where the per-sample losses of each computed slice go.
  caf::actor distributor;
  // Faults: the job's fault plan (kill, hang, drop, partition fire once per job), this
  // incarnation's release token (a supervisor restart gets a fresh one), the longest a hang may
  // block (the job's watchdog), and what the supervisor needs to decide on a failure.
  std::shared_ptr<fault_plan> faults;
  std::shared_ptr<cancel_token> cancel = std::make_shared<cancel_token>();
  // Slices this incarnation computed: its supervisor restarts a worker that failed after
  // training without backoff, and backs off only from one that keeps failing before it
  // computes anything (a crash loop). Each incarnation gets its own counter.
  std::shared_ptr<std::atomic<std::int64_t>> computed =
      std::make_shared<std::atomic<std::int64_t>>(0);
  double max_hang_seconds = 600.0;
  policies::policy_table supervision;
  policies::restart_limits restarts;  // the job's restart intensity, per worker
  std::uint64_t seed = 1;             // the job's: backoff jitter is reproducible
};

// A job handed to the task manager.
struct job_request {
  config::job_config config;
};

// A finished job's report, handed from the job to the task manager.
struct job_report_data {
  job_report report;
};

// The task manager's jobs now: queued ones in the order they start, then running, then ended.
struct jobs_view {
  std::vector<job_view> jobs;
};

// Everything the task manager knows at the end of a run.
struct run_report_data {
  run_report report;
};

}  // namespace troupe::actors
