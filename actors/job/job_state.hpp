#pragma once
// The job actor's state (actors/job/job.hpp). Only the job's own files include this: the rules it
// applies live in plain classes it holds (membership, checkpoint_cycle, job_stats, job_sync).
#include <algorithm>
#include <atomic>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "actors/checkpoint/checkpoint_cycle.hpp"
#include "actors/common/fault_injection.hpp"
#include "actors/common/generation_gate.hpp"
#include "actors/common/payloads.hpp"
#include "actors/job/job.hpp"
#include "actors/job/membership.hpp"
#include "actors/observe/job_stats.hpp"
#include "actors/observe/job_timeline.hpp"
#include "actors/observe/step_trace.hpp"
#include "actors/sync/job_sync.hpp"
#include "data/sample_ledger.hpp"
#include "models/batch.hpp"
#include "policies/leave_out.hpp"
#include "policies/supervision.hpp"

namespace troupe::actors {

enum class job_phase { loading, spawning, probing, running, draining, evaluating, done };

// A worker's part of the final evaluation: `count` test samples from `offset`.
struct eval_share {
  std::int64_t offset = 0;
  std::int64_t count = 0;
};

struct worker_slot {
  std::string name;  // GROUP/INDEX
  std::string group;
  std::string device;
  caf::actor actor;
  bool ready = false;
  // Lost while the job started (spawning, probing): its failure waits in
  // job_state::start_downs for the membership, and the job starts without it.
  bool lost_at_start = false;
  double capability = 1.0;
  std::int64_t samples = 0;
  std::int64_t steps = 0;
  std::int64_t first_step = -1;
  double compute_seconds = 0.0;
  std::int64_t wire_bytes = 0;
};

// Where the job's wall time goes, for the report and the last log line.
struct step_clock {
  steady::time_point job_t0 = steady::now();
  steady::time_point train_t0 = steady::now();
  steady::time_point step_t0 = steady::now();
  steady::time_point reduce_t0 = steady::now();
  double step_seconds_total = 0.0;
  double compute_phase_seconds = 0.0;  // dispatch -> last step_done
  double reduce_phase_seconds = 0.0;   // -> last applied
};

// The checkpoint side the actor holds besides the cycle itself.
struct job_checkpoints {
  checkpoint_cycle cycle;
  std::string dir;       // checkpoint.dir/JOBNAME
  std::string identity;  // checkpoint_identity() of this job
  caf::actor writer;
  std::optional<std::int64_t> resumed_from;  // --resume found the checkpoint of this step
  std::vector<std::string> resumed_members;  // the workers of the run that wrote it
};

// The reduction deadline's policy: the step deadline's (4 x the 95th percentile of the last 50),
// over reduction times, at least twice the job's hang floor (1 s by default), and that or 1 s,
// whichever is more, until five were measured (the job then takes the larger of it and the step
// deadline). A reduction has more to wait for than a compute phase (every member's part), so
// its floor is the larger; a job that lowers the hang floor to catch a silent member sooner
// lowers both.
inline policies::deadline_params reduce_deadline_params(double hang_floor_seconds) {
  policies::deadline_params p;
  p.floor_seconds = 2 * hang_floor_seconds;
  p.initial_seconds = std::max(1.0, p.floor_seconds);
  return p;
}

struct job_state {
  static inline const char* name = "job";
  job_launch launch;
  generation_gate gate;
  job_phase phase = job_phase::loading;
  caf::actor distributor;
  // No group's replica lives in an agent (actors/common/specs.hpp replica_in_agent), and the
  // canonical reduction's block (config::reduction_block), both fixed at the start: plans,
  // re-plans, workers and the sync mode cut at the block's boundaries. 0: none.
  bool replicas_here = true;
  std::int64_t reduction_block = 0;
  std::unique_ptr<job_sync> sync;
  std::vector<worker_slot> workers;
  data_bundle data;
  std::shared_ptr<const models::model> prototype;
  std::shared_ptr<param_store> store;
  // The job's current share on shared devices, read by every worker setup (worker_setup::share).
  std::shared_ptr<std::atomic<double>> share = std::make_shared<std::atomic<double>>(1.0);
  std::vector<double> weights;
  std::vector<group_slot> waiting_groups;  // elastic: joined before RUNNING (job_growth.hpp)
  // Groups asked to leave at the next step boundary, and who waits for the answer.
  std::vector<std::pair<std::string, caf::response_promise>> leaving;
  bool interrupting = false;  // a drain with interrupt: checkpoint, then status interrupted
  bool paused = false;  // elastic: held at a step boundary with fewer than min_devices members
  int answers = 0;      // probes answered while the job probes
  // EVALUATING (actors/job/job_evaluation.hpp): by rank, the shares of the test set it owes, in
  // the order it was sent them, and whether it was lost.
  std::vector<std::deque<eval_share>> eval_owed;
  std::vector<bool> eval_lost;
  std::vector<double> probe_seconds;
  // Workers lost while the job started, whose supervision policy keeps the job (restart,
  // migrate): their failures, and the ready messages of their restarted incarnations (with the
  // incarnation), replayed once the membership exists (replay_start_failures).
  std::vector<msg::worker_down> start_downs;
  std::vector<std::pair<msg::worker_ready, caf::actor>> start_readies;

  // Steps.
  std::int64_t step = 0;  // the step in flight (= parameter version it reads)
  std::int64_t steps_total = 0;
  std::int64_t steps_per_pass = 1;
  std::optional<std::pair<msg::step_plan, msg::local_ref<msg::index_list>>> next_plan;
  msg::step_plan plan;
  msg::local_ref<msg::index_list> indices;  // the step in flight's (re-planned slices use them)
  int pending_applied = 0;
  // sync: allreduce: how each member the step's reduction went to answered, by rank, and whether
  // a member was lost while they reduced (actors/job/job_reduce_recovery.hpp).
  std::vector<reduce_answer> reduce_answers;
  bool reduce_recovering = false;
  std::int64_t reduce_deadline_seq = 0;  // the reduction deadline armed last
  // 4 x the 95th percentile of the last 50 reductions, at least 1 s (and the step deadline).
  policies::step_deadline reduce_deadline;  // from the job's hang floor (membership_start)
  double step_grad_sq = 0.0;                // ps: the shards' parts of |G_B|^2 of this step
  std::vector<std::shared_ptr<const msg::grad_buffer>> grads;  // by rank, this step
  models::step_stats step_stats;
  step_clock clock;
  step_trace trace;  // each step's phases (actors/observe/step_trace.hpp)
  std::int64_t samples_total = 0;
  // Every sample of every applied step, by pass (none: data.priority or data.mode: sharded).
  std::optional<data::sample_ledger> ledger;
  // The ledger's verdicts of the runs before this one (a resumed run: the checkpoint's totals).
  data::ledger_totals ledger_earlier;
  std::int64_t pass = 0;
  models::step_stats pass_stats;  // the current pass over the training set
  models::step_stats eval_stats;
  std::int64_t progress = 0;  // bumped on every answer; the watchdog compares it
  std::int64_t watched_progress = -1;
  // The gradient noise scale, the imbalance index and the rebalance count; the rebalancer
  // policy actor of `split: adaptive` (actors/job/rebalancer.hpp).
  job_stats stats;
  caf::actor rebalancer;
  // split: adaptive: the once-a-job trial without the slowest members, and what it asks of the
  // next step boundary.
  std::optional<policies::leave_out_trial> leave_out;
  policies::leave_out_trial::action leave_out_next = policies::leave_out_trial::action::none;
  job_checkpoints ckpt;
  // Members, the slices the step in flight still owes, hang deadlines, fault counters.
  membership mem;
  msg::generation_id step_generation = 1;    // the step in flight was handed out in it
  msg::generation_id reduce_generation = 1;  // its reduction was sent in it
  std::shared_ptr<fault_plan> faults;
  job_timeline timeline;                                 // the report's series and events
  std::size_t seen_detections = 0, seen_recoveries = 0;  // of st.mem.report(), in the timeline
};

using job_self = stateful<job_state>*;

// The workers' names (GROUP/INDEX), by rank.
inline std::vector<std::string> worker_names(const job_state& st) {
  std::vector<std::string> out;
  for (const auto& w : st.workers) out.push_back(w.name);
  return out;
}

// actors/job/job.cpp: the phase edges.
void enter(job_self self, job_phase phase);
// Edges 5, 6', 7: report, release everything the job holds, quit.
void finish(job_self self, job_status status, const std::string& error = "",
            bool bad_input = false);
void fail(job_self self, const caf::error& e, const std::string& where);

}  // namespace troupe::actors
