#pragma once
// The job's synchronisation seam: one implementation per `sync.mode`, chosen once when the job
// has its data (edge 1 of the job's state machine, actors/job/job.hpp). The job drives the step
// protocol (plan, dispatch, collect the members' gradient sums) and calls the seam at fixed
// points; everything that differs between the modes is behind it:
//
//   ps         parameter-server shards own the optimizer; the job sends them the gradient sums
//              and each shard reduces its slice in rank order, applies, answers `applied`
//              (actors/sync/parameter_server.hpp).
//   allreduce  every worker holds a parameter and optimizer replica; the job sends every member
//              reduce_cmd and the members allreduce among themselves
//              (actors/sync/allreduce_step.hpp).
//   local      local SGD: every worker steps its own replica and the replicas are averaged
//              every `period` steps (actors/sync/local_step.hpp).
//
// Fixed points, in the order a job meets them:
//   start          the model is built: spawn what the mode needs (ps: the shards)
//   params_for     the parameter store a worker of `rank` reads
//   open_generation the member list starts a new generation (at the first step and after each
//                  membership change)
//   reduce         every member reported its gradient sum: reduce; how many `applied` to await
//   on_applied     one `applied` arrived
//   commit         the step is applied everywhere: publish version step + 1
//   capture        a checkpoint is due (and at_capture_point): ask whoever holds the optimizer
//                  state for its copy
//   end            the job ends: stop or abort what the mode started; a reason when a completed
//                  run is inconsistent
// Member loss and checkpoints are only supported where the mode says so (survives_member_loss,
// checkpoints): allreduce survives a lost member with the replicated optimizer, at any point of
// the step and through a process ring too, and local with the lost member's training folded into
// the next average (actors/job/job_reduce_recovery.hpp); the distributed optimizer form survives no
// loss and takes no checkpoints.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/common/caf_compat.hpp"
#include "actors/common/messages.hpp"
#include "actors/common/payloads.hpp"
#include "core/config.hpp"

namespace troupe {
struct job_report;
}

namespace troupe::actors {

struct replica_optimizer;  // actors/sync/allreduce_step.hpp

// Who a new generation is made of, one entry per worker rank: a member (a rank still joining,
// or migrated away, is not), and whether its replica lives in an agent (actors/common/specs.hpp
// replica_in_agent).
struct generation_members {
  std::vector<bool> member;
  std::vector<bool> in_agent;
};

struct job_snapshot;
class job_stats;
struct local_replica;  // actors/sync/local_step.hpp

// A member's answer to the step's reduction (allreduce, local): none (not sent one), waiting,
// applied, dropped (its reduction was aborted), lost (failed before it answered).
enum class reduce_answer : std::uint8_t { none, waiting, applied, dropped, lost };

// How a step whose reduction lost a member goes on, once every survivor answered.
struct reduction_recovery {
  enum class action { complete, rerun_step, rerun_average } next = action::rerun_step;
  int from = -1;   // complete: the rank whose replica the others took (-1: none was needed)
  int copied = 0;  // how many took it
};

// What a reduction needs from the job.
struct reduce_round {
  msg::reduce_cmd cmd;                               // stamped with the job's generation
  msg::local_ref<msg::grad_set> grads;               // the slices' sums in offset order
  std::vector<std::int64_t> samples;                 // each slice's samples, the same order
  const std::vector<caf::actor>* workers = nullptr;  // by rank
  bool last = false;                                 // the job stops after this step
};

class job_sync {
 public:
  virtual ~job_sync() = default;

  virtual void start(caf::event_based_actor* self, const std::shared_ptr<param_store>& store,
                     const job_snapshot* resume) = 0;
  virtual std::shared_ptr<param_store> params_for(std::size_t rank,
                                                  const std::shared_ptr<param_store>& store) = 0;
  virtual void open_generation(caf::event_based_actor* self, msg::job_id job,
                               msg::generation_id generation, const generation_members& members,
                               bool first) = 0;
  // Returns the number of `applied` answers the step waits for.
  virtual int reduce(caf::event_based_actor* self, const reduce_round& round) = 0;
  // True when |G_B|^2 arrives in parts with `applied` (ps: the shards' parts; allreduce: member
  // 0's whole); else the job computes it from the sums while the members reduce.
  virtual bool grad_norm_from_applied() const { return false; }
  // Step `step` is applied: version step + 1 on every replica. Returns a line to log, if any.
  // Throws std::exception when the mode's own policy fails (the job then fails).
  virtual std::optional<std::string> commit(std::int64_t step, double compute_seconds,
                                            double reduce_seconds, double loss) = 0;
  // May the job stop on max_seconds after the step just applied?
  virtual bool may_stop_on_time() const { return true; }
  virtual bool survives_member_loss() const { return false; }
  // Every member lost at once: can the job go on once a rank is back? Not when the replicas
  // live in agents: which of them applied the step in doubt is no longer known, and going on
  // from one that applied it twice would train another model without an error.
  virtual bool survives_losing_every_member() const { return true; }
  // A member lost while the step computes: do the survivors compute its slices and does the
  // reduction take them (ps; allreduce in one process, through `regroup`)? Otherwise the step
  // runs again over the survivors (actors/job/job_reduce_recovery.hpp).
  virtual bool regroups_lost_slices() const { return true; }
  // A member lost while the members reduce: the job waits for every survivor's `applied` or
  // `reduce_dropped`, then completes the step or runs it again (allreduce). ps needs none of
  // this: the shards reduce what they were sent, whoever is lost.
  virtual bool recovers_lost_reduction() const { return false; }
  // Every surviving member answered the reduction of `step` (answers by rank): make the
  // replicas one and say how the step goes on.
  virtual reduction_recovery after_lost_reduction(const std::vector<reduce_answer>&, std::int64_t) {
    return {};
  }
  // local: the average of the step in flight again, over the current members (their local step
  // is applied); returns the number of `applied` to await.
  virtual int rerun_average(caf::event_based_actor*, const msg::local_cmd&,
                            const std::vector<caf::actor>&) {
    return 0;
  }
  // local: the optimizer replica and training since the last average of `rank`, which the job
  // owns (null: the worker makes its own).
  virtual std::shared_ptr<local_replica> local_state_for(std::size_t) { return nullptr; }
  virtual bool checkpoints() const { return false; }
  // Steps per parameter average now (sync: local); 1 for the modes that synchronise every step.
  virtual int sync_period() const { return 1; }
  // May a due checkpoint be taken at this step boundary? (local: only right after an average,
  // when every replica holds the same parameters; a due capture waits for the next one.)
  virtual bool at_capture_point() const { return true; }
  // The optimizer state each worker's replica starts from (allreduce resumed from a
  // checkpoint); null: a fresh optimizer.
  virtual std::shared_ptr<const models::optimizer_state> replica_optimizer_state() const {
    return nullptr;
  }
  // allreduce: the optimizer replica of worker `rank`, which the job owns so that a rank that
  // joins later can be brought to the others' state (null: the worker makes its own).
  virtual std::shared_ptr<replica_optimizer> optimizer_for(std::size_t) { return nullptr; }
  // A rank joins at this step boundary (every worker is idle): bring its replica (parameters and
  // optimizer state) to that of member `reference`. Returns false when the mode cannot.
  virtual bool bring_up_to_date(std::size_t, std::size_t) { return true; }
  // Sends the capture; returns the number of parts to collect (0: none).
  virtual int capture(caf::event_based_actor*, const msg::ckpt_capture&) { return 0; }
  // Every part arrived: make the snapshot's parts what a checkpoint holds (parts that tile the
  // parameters once). Throws troupe::runtime_failure when they cannot be.
  virtual void assemble(job_snapshot&) const {}
  // The job ends with `status`. Returns why a completed run's result is not consistent, or "".
  virtual std::string end(caf::event_based_actor* self, job_status status) = 0;
  virtual void fill_report(job_report& r, std::int64_t steps) const = 0;
};

// The one choice of the mode. Throws input_error for a sync section the mode cannot run (e.g. a
// bad local period). `replicas_here`: no worker of the job keeps its replica in an agent
// (actors/common/specs.hpp replica_in_agent), so allreduce may keep one replica for all members.
// `reduction_block`: the job's config::reduction_block (allreduce adds block sums when > 0).
std::unique_ptr<job_sync> make_job_sync(const config::job_config& cfg, msg::job_id job,
                                        double deadline_seconds, bool replicas_here = false,
                                        std::int64_t reduction_block = 0);
std::unique_ptr<job_sync> make_ps_sync(const config::job_config& cfg, msg::job_id job);
// one_replica: see job_allreduce (actors/sync/allreduce_step.hpp).
std::unique_ptr<job_sync> make_allreduce_sync(const config::job_config& cfg,
                                              double deadline_seconds, bool one_replica = false,
                                              std::int64_t reduction_block = 0);
std::unique_ptr<job_sync> make_local_sync(const config::job_config& cfg, double deadline_seconds);

}  // namespace troupe::actors
