#pragma once
// `sync: allreduce` (the synchronous step with a replicated optimizer): the barrier-triggered
// allreduce.
//
//   job: every member reported step_done -> reduce_cmd(step, generation, ranks that computed,
//        total_samples) + local_ref<allreduce_session> to EVERY member of the generation
//   worker: allreduce its gradient SUM and sample count with the other members, divide by the
//        total, apply its own optimizer replica to its own parameter replica -> applied
//   job: every member applied -> version step + 1 on every replica, next step
//
// The optimizer state lives on the workers (one replica each); the job keeps one parameter
// replica per worker (worker_setup::params), replica 0 doubling as the job's `store` (reports,
// checkpoints). Replicas stay bit-identical because every replica applies the same optimizer to
// the same reduced bits: the reduction order is fixed (rank order in the shared in-process
// reducer, ring order per segment + allgather copies in the ring reducer), so all replicas read
// one result. The job checks it at the end (fnv1a64 of every replica).
//
// Optimizer forms (optimizer.form):
//   replicated  : the mean gradient (sum over ranks / total samples) -> optimizer.step
//   distributed : max-adabelief only. Each worker advances its own moments from its LOCAL mean
//                 gradient (models/max_adabelief.hpp local_moments), the bias-corrected first
//                 moment is averaged over the members and the max second moment max-reduced,
//                 then apply_update. A member without samples this step contributes a zero
//                 gradient to its moments (it still averages in: the form is defined per worker).
//
// Transports: the reducer is the seam. In one process the session's reducer is the shared
// in-process allreduce (collectives/inproc/shared_allreduce.hpp: one shared result, no copies);
// ring_reducer runs collectives::allreduce over one communicator per rank, so workers in several
// processes drop in ZeroMQ or shm communicators built from the rendezvous store for the
// generation's member list. Members whose replica lives in an agent reduce through the process
// ring (actors/sync/process_ring.hpp), the two-level form of the same step. Gradients and
// parameters never ride inside CAF messages; the session does not either between processes (it is
// local-only, like every local_ref).
//
// Deadlines and aborts: every reduction carries the session's deadline (the job's step deadline)
// and its abort_signal. The job aborts the session when the step can no longer complete (the job
// fails or is cancelled; a new generation opened with open_generation aborts the old session too):
// workers blocked in it get collective_error(aborted) within a few milliseconds, drop the step
// and say so (reduce_dropped). After an abort the replicas may differ (some may have applied);
// the job makes them one again before it goes on (actors/job/job_reduce_recovery.hpp).
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/common/payloads.hpp"
#include "collectives/communicator.hpp"
#include "collectives/inproc/shared_allreduce.hpp"
#include "collectives/op_control.hpp"
#include "collectives/options.hpp"
#include "core/config.hpp"
#include "core/span.hpp"
#include "models/optimizer.hpp"

namespace troupe::actors {

// The canonical reduction (config::reduction_block): the step's block sums that this process
// holds, in block order, each with its place in the step's order and their samples together.
// With every replica here they are all of the step's blocks; through a process ring, the control
// process's, which the ring adds to the agents' (collectives/block_allreduce.hpp). `held` keeps
// the buffers alive.
struct block_list {
  std::shared_ptr<const void> held;
  std::vector<const float*> blocks;
  std::vector<std::uint32_t> index;
  std::uint64_t samples = 0;
};

// One member's call: the in-process group's options, which every reducer takes (data null: the
// member contributes nothing, a zero-sample member; weight: its sample count).
struct reduce_call : collectives::shared_allreduce_options {
  // The canonical reduction: this process's blocks (`inputs` lists their sums). Null: none.
  const block_list* blocks = nullptr;
};

struct reduce_outcome {
  span<const float> values;  // valid until this rank's second-next call
  double total_weight = 0.0;
  // |values|^2 where the reducer computed it on the way (reduce_call::sq_norm); negative: not.
  double sq_norm = -1.0;
};

struct agent_part;     // actors/sync/process_ring.hpp
struct local_replica;  // actors/sync/local_step.hpp
struct ring_record;    // actors/sync/process_ring.hpp

// The transport seam. Rank r calls from its own thread only; all members make the same calls in
// the same order. Throws collectives::collective_error.
class step_reducer {
 public:
  virtual ~step_reducer() = default;
  virtual int size() const = 0;
  virtual reduce_outcome reduce(const reduce_call& call) = 0;
  // A member whose replica lives in an agent: its gradient is there, and the agent joins the
  // reduction (actors/sync/process_ring.hpp). Only the process ring takes one; others throw.
  virtual reduce_outcome reduce(const reduce_call& call, const agent_part& agent);
  // Ranks blocked inside a reduction now, where the transport can tell (tests); else -1.
  virtual int waiting() const { return -1; }
};

// In one process: the shared allreduce (rank-order sums, one shared result buffer).
std::shared_ptr<step_reducer> make_shared_reducer(int members);
// Any transport: ring allreduce over communicators[rank] (in-process links in tests; ZeroMQ or
// shm communicators for workers in several processes).
std::shared_ptr<step_reducer> make_ring_reducer(std::vector<collectives::communicator> comms,
                                                std::uint64_t job, std::uint64_t generation);

// What every member of one membership generation shares. Local-only (msg::local_ref).
struct allreduce_session {
  std::uint32_t job = 0;
  std::uint32_t generation = 0;
  int members = 0;
  // Worker rank -> its index among the members (what the reducer calls its rank); -1: not a
  // member of this generation (a rank still joining).
  std::vector<int> index_of;
  models::optimizer_spec optimizer;
  bool distributed = false;  // optimizer.form: distributed (max-adabelief)
  double deadline_seconds = 600.0;
  // The members reduce through a process ring (some replicas live in agents); rank 0 then
  // reports the squared norm of the mean gradient with `applied`.
  bool process_ring = false;
  // Every member steps ONE parameter replica and optimizer (job_allreduce's one_replica): the
  // optimizer is applied inside the shared reduction, piece by piece, by the ranks that reduce.
  bool one_replica = false;
  std::shared_ptr<collectives::abort_signal> abort = std::make_shared<collectives::abort_signal>();
  std::shared_ptr<step_reducer> reducer;  // null in a generation with no members
  // The reducer of member `rank`; throws runtime_failure naming `mode` and the generation where
  // there is none (a generation with no members, where nobody may reduce).
  step_reducer& reducer_for(int rank, const char* mode) const;
  // A step after a member failed mid-step: what each member contributes instead of its own last
  // slice, by member index: the sum of the slices it computed (a survivor also computed the
  // failed member's slices), and member 0 also those a member computed before it left. Empty:
  // every member contributes its own buffer (every step without a failure).
  std::vector<std::shared_ptr<const std::vector<float>>> contribution;
  std::vector<std::int64_t> contribution_samples;
  // The canonical reduction (config::reduction_block): the step's block sums held in this
  // process, which each member's reduction adds in block order (with the agents' through a
  // process ring) instead of the members' own sums. Null: every member contributes its own (or
  // its `contribution`).
  std::shared_ptr<const block_list> blocks;
  // sync: local, an averaging step: the replicas of ranks out of the membership that trained
  // since the last average (a lost member's). Member 0 adds them to its part, weighted by their
  // samples, so their training is not lost.
  struct folded {
    std::shared_ptr<param_store> params;
    std::shared_ptr<local_replica> replica;
  };
  std::vector<folded> fold;
};

// A worker's optimizer replica (replicated form) or its local moments (distributed form).
struct replica_optimizer {
  std::unique_ptr<models::optimizer> replicated;
  // One replica for all members: the reductions committed to it (each applies its step in
  // full), counted when committed, so the job can tell whether a step it lost every answer of
  // was applied all the same.
  std::atomic<std::int64_t> committed{0};
  // Loaded into `replicated` when it is made (a resumed run's checkpointed state), then dropped.
  std::shared_ptr<const models::optimizer_state> resume;
  // distributed: steps applied, and this worker's moments (m, s, s_max: what a checkpoint
  // keeps, by rank) with its scratch. The job owns the replica (optimizer_for), so a checkpoint
  // can ask every member for its moments and a joining rank can start from a member's.
  std::int64_t t = 0;
  std::vector<float> local, m, s, s_max, m_hat, s_hat;
};

// optimizer.form: distributed: a replica's moments as an optimizer state (step t, buffers m, s,
// s_max: what a checkpoint keeps of each worker), and back. load_moments throws
// troupe::input_error naming `source` when the state is not n floats of each.
models::optimizer_state moments_of(const replica_optimizer& opt);
void load_moments(replica_optimizer& opt, const models::optimizer_state& state, std::size_t n,
                  const std::string& source);

// One worker's part of one step.
struct replica_step {
  int rank = 0;
  bool contributed = false;     // computed a slice this step (is in reduce_cmd::ranks)
  const float* grad = nullptr;  // the gradient SUM over its samples
  std::int64_t samples = 0;
  std::int64_t total_samples = 0;  // the job's count, checked against the allreduced one
  float* params = nullptr;         // this worker's replica
  std::size_t count = 0;
  // Set when the worker's replica also lives in an agent, which holds the gradient.
  const agent_part* agent = nullptr;
  // Called between the reduction and the optimizer (fault injection's `kill` in phase apply;
  // sync: local, before the local step); what it throws leaves the replica unapplied.
  std::function<void()> before_apply;
  std::int64_t step = -1;  // sync: local: the step (local_replica::stepped)
  // Raised when the agent holding this replica is lost: the member's waits in the reduction fail
  // at once (op_context::gone) instead of when the job's new generation aborts them, since a
  // cut-off agent's peers may otherwise wait for it until the deadline.
  std::shared_ptr<const collectives::abort_signal> gone;
  // Set: the reduction's and the optimizer's seconds are added here (the step's trace).
  struct times {
    double sum = 0.0;
    double apply = 0.0;
  };
  times* timing = nullptr;
};

// Allreduce + optimizer on this worker's replica. Throws collectives::collective_error
// (deadline, abort, peer gone) or troupe::runtime_failure (the sample totals disagree). Returns
// |mean gradient|^2 when this member reports it for the job (rank 0 under a process ring, whose
// job cannot read the agents' gradients), else 0.
double allreduce_and_apply(replica_optimizer& opt, const allreduce_session& session,
                           const replica_step& step);

// The job's side: parameter replicas, the generation's session, the end-of-run check.
class job_allreduce {
 public:
  // one_replica: every member's replica lives in this process and the optimizer is replicated
  // (sync: allreduce, no group whose workers compute in an agent). The members then share one
  // parameter store and one optimizer, which the shared reduction applies piece by piece on
  // all their threads: one optimizer pass per step instead of one per member. The step's
  // outcome is then the group's: the reduction applies it to the one replica once every member
  // has arrived, or not at all (collectives/inproc/shared_allreduce.hpp, on_piece).
  job_allreduce(const config::job_config& cfg, double deadline_seconds, bool one_replica = false);

  // The parameter store of worker `rank`: rank 0 gets `initial` itself, others a copy of it
  // (with one_replica, `initial` itself too).
  std::shared_ptr<param_store> replica(std::size_t rank,
                                       const std::shared_ptr<param_store>& initial);
  // A resumed run: the optimizer state the one replica starts from (one_replica; the workers
  // give their own replicas theirs).
  void resume_from(std::shared_ptr<const models::optimizer_state> state);
  // optimizer.form: distributed, resumed: each rank's moments (a checkpoint's, by the rank that
  // wrote them), loaded into the rank's optimizer replica when replica() makes it. A rank the
  // checkpoint has none of (it was written on fewer workers) takes the lowest rank's, as a
  // worker that joins a running job does.
  void resume_moments(std::vector<std::pair<std::int32_t, models::optimizer_state>> ranks,
                      std::string source);
  // one_replica: the reductions committed to the one replica so far (-1 without one).
  std::int64_t one_replica_steps() const;
  // The optimizer replica of worker `rank` (made with its parameter store; every incarnation of
  // the rank uses it).
  std::shared_ptr<replica_optimizer> optimizer(std::size_t rank) const;
  // At a step boundary (no worker applies): rank `to` takes rank `from`'s parameters, version
  // and optimizer state. The job calls it for a rank that joins a running job.
  void copy_replica(std::size_t from, std::size_t to);
  // The same, parameters and version only (sync: local, whose optimizer state is per replica).
  void copy_params(std::size_t from, std::size_t to);
  // Rank `rank`'s parameter store (null before replica() made it).
  std::shared_ptr<param_store> store(std::size_t rank) const {
    return rank < replicas_.size() ? replicas_[rank] : nullptr;
  }
  // A new session for (job, generation) over the ranks r with `member[r]`; aborts the previous
  // one. `in_agent[r]`: rank r's replica lives in an agent (a process ring then reduces;
  // replicated optimizer form only); empty: none does.
  void open_generation(std::uint32_t job, std::uint32_t generation, const std::vector<bool>& member,
                       const std::vector<bool>& in_agent = {});
  // The process ring's timings (null when no generation used one).
  std::shared_ptr<const ring_record> ring() const { return ring_; }
  const std::shared_ptr<const allreduce_session>& session() const { return session_; }
  // Stops reductions in flight (the job ends or bumps its generation).
  void abort(const std::string& reason);
  // Every replica is at `version` (the job's step protocol, as store->version in ps mode).
  void publish(std::int64_t version);
  // "" when every replica holds the same bits, else which one differs.
  std::string check_replicas() const;

 private:
  config::job_config cfg_;
  double deadline_seconds_;
  bool one_replica_;
  std::shared_ptr<const models::optimizer_state> resume_;
  std::vector<std::pair<std::int32_t, models::optimizer_state>> resume_moments_;
  std::string resume_source_;
  std::shared_ptr<replica_optimizer> one_;  // one_replica: every rank's optimizer, made once
  std::vector<std::shared_ptr<param_store>> replicas_;
  std::vector<std::shared_ptr<replica_optimizer>> optimizers_;
  std::shared_ptr<const allreduce_session> session_;
  std::shared_ptr<ring_record> ring_;
};

}  // namespace troupe::actors
