#pragma once
// Every message type of the actor layer and the ONE CAF type-id block that registers them. The
// wire identity of a CAF 0.17 type is its registered name, so every binary that talks to
// another must include this one header.
//
// Families:
//   gradient  : plan_request, step_plan, compute_cmd, go_step, step_done, reduce_cmd, local_cmd,
//               applied, reduce_dropped, eval_cmd, eval_done, probe_cmd, probe_done
//   priority  : sample_losses (data priority)
//   load      : step_metrics, split_update, split_decision, share_member, share_decision,
//               share_update
//   lifecycle : spawn_worker, worker_ready, worker_down, worker_failed, step_timeout,
//               restart_worker, drain, release, job_finished, log_line
//   checkpoint: ckpt_capture, ckpt_part, ckpt_write, ckpt_written
//   processes : agent_hello, agent_answer, agent_bye_atom, agents_atom (agents joining the
//               control process over CAF's middleman), host_worker, host_answer (a worker's
//               device in an agent), group_leave_atom (an agent's group leaves its jobs at
//               their next step boundary: drain, SIGTERM)
//
// Every message that belongs to a job carries (job, generation). `generation` is the MEMBERSHIP
// generation (bumped when the member list changes), not a pass over the data (`data_epoch`). A
// receiver drops a message whose generation is not its current one
// (actors/common/generation_gate.hpp).
//
// Control messages hold only descriptors. Tensor bytes never ride inside a CAF message between
// processes (CAF serialises a vector<float> element by element, about 20x slower than ZeroMQ);
// in one process they travel as a second message element of type local_ref<T> (a shared_ptr to
// an immutable or owner-synchronised buffer), which is marked local-only and must never be sent
// to a remote actor.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/type_id.hpp>

#include "actors/common/agent_messages.hpp"
#include "core/kinds.hpp"

namespace troupe::msg {

using job_id = std::uint32_t;
using generation_id = std::uint32_t;
// A message from outside the job's membership (the task manager's cancel) that applies to
// whichever generation is current.
inline constexpr generation_id any_generation = ~generation_id{0};

// -- gradient family ------------------------------------------------------------------------

// job -> data_distributor: the plan of one step.
struct plan_request {
  job_id job = 0;
  generation_id generation = 0;
  std::int64_t step = 0;
};

// data_distributor -> job: the global batch (indices travel as local_ref<index_list>) cut into
// per-rank counts; rank r takes indices [sum counts[<r], +counts[r]).
struct step_plan {
  job_id job = 0;
  generation_id generation = 0;
  std::int64_t step = 0;
  std::int64_t data_epoch = 0;  // pass over the training set this step belongs to
  std::vector<std::int64_t> counts;
};

// job -> device_worker: compute the gradient SUM of a slice with parameters of `version`.
struct compute_cmd {
  job_id job = 0;
  generation_id generation = 0;
  std::int64_t step = 0;
  std::int64_t version = 0;  // parameter version the worker must read (= step)
  std::int32_t rank = 0;
  std::int64_t offset = 0;  // into the step's index list
  std::int64_t count = 0;
  // Sent before `version` was published (the successor's slice, gathered while the shards
  // reduce): the step was ready for this worker when the version was published.
  bool early = false;
};

// job -> device_worker: the parameters of `step` are applied; compute the slice of that step
// that arrived early (its rows were gathered while the shards were still reducing step - 1).
struct go_step {
  job_id job = 0;
  generation_id generation = 0;
  std::int64_t step = 0;
};

// device_worker -> job: the slice is done; its gradient sum travels as local_ref<grad_buffer>.
struct step_done {
  job_id job = 0;
  generation_id generation = 0;
  std::int64_t step = 0;
  std::int32_t rank = 0;
  std::int64_t samples = 0;
  double loss_sum = 0.0;
  std::int64_t correct = 0;
  // |G_b|^2: squared L2 norm of the worker's MEAN gradient over its `samples` (the noise-scale
  // input, policies/noise_scale.hpp; the buffer itself holds the sum).
  double grad_sq_norm = 0.0;
  double compute_seconds = 0.0;  // the device's own measure (including sim stretch)
  double gate_wait_seconds = 0.0;
  double gather_seconds = 0.0;  // copying the slice's rows into a contiguous batch
  std::int64_t wire_bytes = 0;  // moved between processes for this slice (a device in an agent)
  // The compute's start and end on the steady clock (ns since its epoch; one clock for every
  // process of a host): where the step's time went (actors/observe/step_trace.hpp).
  std::int64_t compute_start_ns = 0;
  std::int64_t compute_end_ns = 0;
};

// job -> parameter_server shard: every member reported; sum the pushed gradients in `ranks`
// order (fixed, not arrival), divide by total_samples, apply the optimizer. The buffers travel
// as local_ref<grad_set>, one per rank in the same order.
struct reduce_cmd {
  job_id job = 0;
  generation_id generation = 0;
  std::int64_t step = 0;
  std::vector<std::int32_t> ranks;
  std::int64_t total_samples = 0;
};

// job -> device_worker (sync: local, actors/sync/local_step.hpp): apply your own optimizer replica
// to your own gradient; with `average`, then average the parameter replicas with the other members
// (weighted by samples since the last average). Rides with local_ref<allreduce_session>.
struct local_cmd {
  job_id job = 0;
  generation_id generation = 0;
  std::int64_t step = 0;
  std::vector<std::int32_t> ranks;  // members that computed a slice this step
  bool average = false;
  // The members applied their local step already; only the average runs (again: the first one
  // was aborted when a member was lost).
  bool average_only = false;
};

// shard -> job: the shard applied the step; its slice is now at `version` (= step + 1).
struct applied {
  job_id job = 0;
  generation_id generation = 0;
  std::int64_t step = 0;
  std::int32_t shard = 0;
  std::int64_t version = 0;
  // ps mode: |slice of the step's mean gradient|^2, computed by the shard from the sum it forms
  // anyway; the job adds the shards' parts for the noise scale instead of re-reading every
  // worker's buffer on its own thread while the shards reduce. 0 from allreduce members.
  double grad_sq = 0.0;
  // The gradient sum's and the optimizer's seconds in this shard or member (the step's trace).
  double sum_seconds = 0.0;
  double apply_seconds = 0.0;
};

// allreduce member -> job: the step's reduction was aborted before this member applied it (the
// job opened a new generation: a member was lost). Its replica is as it was before the step. The
// job waits for every surviving member's `applied` or `reduce_dropped` before it decides how the
// step goes on (actors/job/job_reduce_recovery.hpp).
struct reduce_dropped {
  job_id job = 0;
  generation_id generation = 0;
  std::int64_t step = 0;
  std::int32_t rank = 0;
};

// job -> device_worker: evaluate test rows [offset, offset + count).
struct eval_cmd {
  job_id job = 0;
  generation_id generation = 0;
  std::int64_t version = 0;
  std::int32_t rank = 0;
  std::int64_t offset = 0;
  std::int64_t count = 0;
};

struct eval_done {
  job_id job = 0;
  generation_id generation = 0;
  std::int32_t rank = 0;
  std::int64_t samples = 0;
  double loss_sum = 0.0;
  std::int64_t correct = 0;
};

// job -> device_worker: time `steps` forward/backward passes of `batch` samples (the start-up
// probe that gives a weighted split its weights when the config has none).
struct probe_cmd {
  job_id job = 0;
  generation_id generation = 0;
  std::int32_t rank = 0;
  std::int64_t batch = 0;
  std::int32_t steps = 0;
};

struct probe_done {
  job_id job = 0;
  generation_id generation = 0;
  std::int32_t rank = 0;
  double seconds_per_sample = 0.0;
};

// -- priority family ------------------------------------------------------------------------

// device_worker -> data_distributor (`data.priority`): the per-sample losses of a computed
// slice, so the distributor's scores follow them. The indices and unweighted losses travel as
// local_ref<sample_loss_list>.
struct sample_losses {
  job_id job = 0;
  generation_id generation = 0;
  std::int64_t step = 0;
  std::int32_t rank = 0;
};

// -- load family ----------------------------------------------------------------------------

// job -> metrics_hub (and on to subscribers, policy actors): one completed step.
struct step_metrics {
  job_id job = 0;
  generation_id generation = 0;
  std::string name;
  std::int64_t step = 0;  // steps completed so far
  std::int64_t steps_total = 0;
  std::int64_t data_epoch = 0;
  std::int64_t epochs = 0;
  double loss = 0.0;  // mean loss of this step's global batch
  std::int64_t samples = 0;
  double step_seconds = 0.0;
  double samples_per_second = 0.0;  // running, over the job's step time so far
  double elapsed_seconds = 0.0;     // since the job started
  std::vector<std::string> groups;  // split per group: names and samples this step
  std::vector<std::int64_t> group_samples;
  std::vector<double> worker_compute_seconds;  // by rank, this step
  std::vector<std::int64_t> worker_samples;    // by rank, this step's slices
  double imbalance_index = 0.0;                // CV of this step's per-worker compute seconds
  double noise_scale = 0.0;                    // smoothed gradient noise scale; 0 = not known yet
  double reduce_seconds = 0.0;                 // this step's reduction and apply
  int sync_period = 1;                         // steps per average now (sync: local)
  double share = 1.0;                          // the job's share on shared devices
  std::int64_t rebalances = 0;                 // split changes so far
  std::int64_t wire_bytes = 0;                 // bytes its workers moved between processes so far
};

// job -> data_distributor: split weights by rank (the start split, and rebalancer decisions).
struct split_update {
  job_id job = 0;
  generation_id generation = 0;
  std::vector<double> weights;
};

// rebalancer -> job (`split: adaptive`, actors/job/rebalancer.hpp): the slices by rank (summing to
// the global batch) to use from the next plan on; the job logs, counts and forwards them.
struct split_decision {
  job_id job = 0;
  generation_id generation = 0;
  std::int64_t step = 0;  // the step whose timings led to the decision
  std::vector<std::int64_t> slices;
  std::string reason;  // one line for the job log
};

// Virtual shares of shared devices (cluster.shares; actors/tasks/share_allocator.hpp).
// task_manager -> share_allocator: a job started (active) or ended (!active) on a shared device;
// weight = share x priority weight, batch = its global batch.
struct share_member {
  job_id job = 0;
  generation_id generation = 0;
  std::string name;
  double weight = 1.0;
  std::int64_t batch = 1;
  bool active = true;
};

// share_allocator -> task_manager: new shares (fractions summing to 1) of the jobs named.
struct share_decision {
  std::vector<std::string> names;
  std::vector<double> shares;
  std::string reason;
};

// task_manager -> job -> its device_workers: this job's share weight on shared devices from now
// on. Share decisions are cluster-wide, not bound to a membership generation: the job accepts any
// generation from the task manager and stamps its own when forwarding.
struct share_update {
  job_id job = 0;
  generation_id generation = 0;
  double share = 1.0;
};

// -- lifecycle family -----------------------------------------------------------------------

// job -> group_supervisor: start the worker of `rank` on the group's device `device_index`.
// The setup (model, dataset, parameter store) travels as local_ref<worker_setup>.
struct spawn_worker {
  job_id job = 0;
  generation_id generation = 0;
  std::int32_t rank = 0;
  std::int32_t device_index = 0;
  std::string name;
};

// device_worker -> job: the worker built its device and model replica and is ready.
struct worker_ready {
  job_id job = 0;
  generation_id generation = 0;
  std::int32_t rank = 0;
  double capability = 1.0;
};

// group_supervisor -> job: a worker failed and what the supervisor does about it. `kind` is the
// failure class (policies/supervision), unless `bad_input`: the worker could not build its device
// or model. `action` is restart (after a backoff; the new incarnation sends worker_ready) |
// migrate (gone: its share moves to the others) | fail_job. `generation` is the one the worker
// was spawned in: the job matches it by rank.
struct worker_down {
  job_id job = 0;
  generation_id generation = 0;
  std::int32_t rank = 0;
  failure_class kind = failure_class::crash;
  bool bad_input = false;
  std::string reason;
  failure_policy action = failure_policy::fail_job;
  std::string decision;  // the supervisor's one line for the job log
};

// How logs and errors name a worker_down's cause: its class, or "input".
inline const char* cause_name(const worker_down& m) {
  return m.bad_input ? "input" : name_of(m.kind);
}

// job -> group_supervisor: the job found this worker failed without dying (no answer by the step
// deadline: hang, or its whole group silent: lost-group). The supervisor releases and stops it
// and answers worker_down like for a death.
struct worker_failed {
  job_id job = 0;
  generation_id generation = 0;
  std::int32_t rank = 0;
  failure_class kind = failure_class::hang;
  std::string reason;
};

// job -> itself: the hang deadline of one dispatch of `step` (`seq` numbers the dispatches, so a
// timer of an earlier one is ignored).
struct step_timeout {
  job_id job = 0;
  generation_id generation = 0;
  std::int64_t step = 0;
  std::int64_t seq = 0;
  bool reducing = false;  // the deadline of the step's reduction, not of its compute
};

// group_supervisor -> itself (the backoff timer), or job -> group_supervisor (the last member
// must not be migrated away): start a new incarnation of the failed worker of `rank`.
struct restart_worker {
  job_id job = 0;
  generation_id generation = 0;
  std::int32_t rank = 0;
};

// task_manager -> job: stop after the step in flight (cancel); job answers with job_finished.
// `interrupt`: the run is stopping: a checkpoint at that boundary first, status interrupted.
struct drain {
  job_id job = 0;
  generation_id generation = 0;
  bool interrupt = false;
};

// job -> group_supervisor: stop this job's workers and forget them.
struct release {
  job_id job = 0;
  generation_id generation = 0;
};

// job -> task_manager: the job ended; its report travels as local_ref<job_report_data>.
struct job_finished {
  job_id job = 0;
  generation_id generation = 0;
  std::string name;
  job_status status = job_status::failed;  // completed | failed | cancelled | interrupted
  std::string error;
  bool bad_input = false;  // failed on a troupe::input_error (exit 2 at the command line)
};

// job / task_manager -> metrics_hub: a line for the job's log (and embedding apps' on_log). A
// line with a `kind` is also an event of the job's course (job_event in actors/common/report.hpp:
// failure, detected, recovered, restart, membership, rebalance, resume), handed to on_event.
struct log_line {
  job_id job = 0;
  generation_id generation = 0;
  std::string name;
  std::string text;
  std::string kind;
  std::int64_t step = 0;  // with a kind: the job's step, its time, how long it took (< 0: not
  double t = 0.0;         // a duration)
  double ms = -1.0;
};

// -- checkpoint family (actors/checkpoint/checkpoint_cycle.hpp)
// ------------------------------------------ These are about a step, not a membership: receivers
// match them by job and step, so a membership generation bump while a checkpoint is in flight
// cannot leave it half collected.

// job -> parameter_server shard: copy your slice and optimizer state now (at version `step`).
// Sent before the next reduce_cmd, so the mailbox order makes the copy exactly that version.
struct ckpt_capture {
  job_id job = 0;
  generation_id generation = 0;
  std::int64_t step = 0;
};

// shard -> job: the copy, as local_ref<actors::ckpt_shard_part>; `version` is the shard's.
struct ckpt_part {
  job_id job = 0;
  generation_id generation = 0;
  std::int64_t step = 0;
  std::int32_t shard = 0;
  std::int64_t version = 0;
};

// job -> checkpoint_writer: write the snapshot of `step` (local_ref<actors::job_snapshot>).
struct ckpt_write {
  job_id job = 0;
  generation_id generation = 0;
  std::int64_t step = 0;
};

// checkpoint_writer -> job: the checkpoint of `step` is durable (or `error` says why not).
struct ckpt_written {
  job_id job = 0;
  generation_id generation = 0;
  std::int64_t step = 0;
  std::string path;
  std::int64_t bytes = 0;
  double encode_seconds = 0.0;  // sections built from the snapshot
  double write_seconds = 0.0;   // write + fsync + rename + directory fsync + prune
  std::string error;
};

// -- local-only payload handles -------------------------------------------------------------

// A shared, in-process handle. Never serialised: sending one to a remote actor is a bug.
template <class T>
struct local_ref {
  std::shared_ptr<const T> ptr;
  const T& operator*() const { return *ptr; }
  const T* operator->() const { return ptr.get(); }
  explicit operator bool() const { return static_cast<bool>(ptr); }
};

// A step's sample indices. With `data.priority` it also carries each index's importance weight
// ((N P)^-beta, normalised; empty = all 1). A vector underneath, so that code reading indices
// needs no change.
struct index_list : std::vector<std::int64_t> {
  using std::vector<std::int64_t>::vector;
  index_list() = default;
  explicit index_list(std::vector<std::int64_t> v) : std::vector<std::int64_t>(std::move(v)) {}
  std::vector<float> weights;
};
// Per-sample losses of one computed slice (sample_losses): index i had unweighted loss losses[i].
struct sample_loss_list {
  std::vector<std::int64_t> indices;
  std::vector<float> losses;
};
using grad_buffer = std::vector<float>;
using grad_set = std::vector<std::shared_ptr<const grad_buffer>>;

// -- inspectors (CAF 0.17 form; the 1.x form does not compile here) -------------------------

// --- Processes: an agent (`troupe agent --join`) and the control process's agent_registry ---

#define TROUPE_INSPECT(type, ...)                                  \
  template <class Inspector>                                       \
  typename Inspector::result_type inspect(Inspector& f, type& x) { \
    return f(caf::meta::type_name("troupe." #type), __VA_ARGS__);  \
  }

TROUPE_INSPECT(plan_request, x.job, x.generation, x.step)
TROUPE_INSPECT(step_plan, x.job, x.generation, x.step, x.data_epoch, x.counts)
TROUPE_INSPECT(compute_cmd, x.job, x.generation, x.step, x.version, x.rank, x.offset, x.count,
               x.early)
TROUPE_INSPECT(go_step, x.job, x.generation, x.step)
TROUPE_INSPECT(step_done, x.job, x.generation, x.step, x.rank, x.samples, x.loss_sum, x.correct,
               x.grad_sq_norm, x.compute_seconds, x.gate_wait_seconds, x.gather_seconds,
               x.wire_bytes, x.compute_start_ns, x.compute_end_ns)
TROUPE_INSPECT(reduce_cmd, x.job, x.generation, x.step, x.ranks, x.total_samples)
TROUPE_INSPECT(local_cmd, x.job, x.generation, x.step, x.ranks, x.average, x.average_only)
TROUPE_INSPECT(applied, x.job, x.generation, x.step, x.shard, x.version, x.grad_sq, x.sum_seconds,
               x.apply_seconds)
TROUPE_INSPECT(reduce_dropped, x.job, x.generation, x.step, x.rank)
TROUPE_INSPECT(eval_cmd, x.job, x.generation, x.version, x.rank, x.offset, x.count)
TROUPE_INSPECT(eval_done, x.job, x.generation, x.rank, x.samples, x.loss_sum, x.correct)
TROUPE_INSPECT(probe_cmd, x.job, x.generation, x.rank, x.batch, x.steps)
TROUPE_INSPECT(probe_done, x.job, x.generation, x.rank, x.seconds_per_sample)
TROUPE_INSPECT(step_metrics, x.job, x.generation, x.name, x.step, x.steps_total, x.data_epoch,
               x.epochs, x.loss, x.samples, x.step_seconds, x.samples_per_second, x.elapsed_seconds,
               x.groups, x.group_samples, x.worker_compute_seconds, x.worker_samples,
               x.imbalance_index, x.noise_scale, x.reduce_seconds, x.sync_period, x.share,
               x.rebalances, x.wire_bytes)
TROUPE_INSPECT(split_update, x.job, x.generation, x.weights)
TROUPE_INSPECT(split_decision, x.job, x.generation, x.step, x.slices, x.reason)
TROUPE_INSPECT(spawn_worker, x.job, x.generation, x.rank, x.device_index, x.name)
TROUPE_INSPECT(worker_ready, x.job, x.generation, x.rank, x.capability)
TROUPE_INSPECT(worker_down, x.job, x.generation, x.rank, x.kind, x.bad_input, x.reason, x.action,
               x.decision)
TROUPE_INSPECT(worker_failed, x.job, x.generation, x.rank, x.kind, x.reason)
TROUPE_INSPECT(step_timeout, x.job, x.generation, x.step, x.seq, x.reducing)
TROUPE_INSPECT(restart_worker, x.job, x.generation, x.rank)
TROUPE_INSPECT(drain, x.job, x.generation, x.interrupt)
TROUPE_INSPECT(release, x.job, x.generation)
TROUPE_INSPECT(job_finished, x.job, x.generation, x.name, x.status, x.error, x.bad_input)
TROUPE_INSPECT(log_line, x.job, x.generation, x.name, x.text, x.kind, x.step, x.t, x.ms)
TROUPE_INSPECT(ckpt_capture, x.job, x.generation, x.step)
TROUPE_INSPECT(ckpt_part, x.job, x.generation, x.step, x.shard, x.version)
TROUPE_INSPECT(ckpt_write, x.job, x.generation, x.step)
TROUPE_INSPECT(ckpt_written, x.job, x.generation, x.step, x.path, x.bytes, x.encode_seconds,
               x.write_seconds, x.error)
TROUPE_INSPECT(sample_losses, x.job, x.generation, x.step, x.rank)
TROUPE_INSPECT(share_member, x.job, x.generation, x.name, x.weight, x.batch, x.active)
TROUPE_INSPECT(share_decision, x.names, x.shares, x.reason)
TROUPE_INSPECT(share_update, x.job, x.generation, x.share)

#undef TROUPE_INSPECT

}  // namespace troupe::msg

#include "actors/common/local_refs.hpp"  // the local-only handles, marked unsafe to serialise

// The one id block. Local-only handles are deliberately absent: they cannot be serialised.
CAF_BEGIN_TYPE_ID_BLOCK(troupe, caf::first_custom_type_id)
CAF_ADD_TYPE_ID(troupe, (troupe::msg::plan_request))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::step_plan))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::compute_cmd))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::go_step))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::step_done))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::reduce_cmd))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::applied))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::eval_cmd))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::eval_done))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::probe_cmd))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::probe_done))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::step_metrics))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::split_update))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::split_decision))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::spawn_worker))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::worker_ready))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::worker_down))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::restart_worker))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::drain))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::release))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::job_finished))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::log_line))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::local_cmd))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::ckpt_capture))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::ckpt_part))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::ckpt_write))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::ckpt_written))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::sample_losses))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::share_member))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::share_decision))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::share_update))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::worker_failed))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::step_timeout))
CAF_ADD_TYPE_ID(troupe, (std::vector<float>))
CAF_ADD_TYPE_ID(troupe, (std::vector<double>))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::agent_hello))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::agent_answer))
CAF_ADD_ATOM(troupe, troupe::msg, start_atom, "start")
CAF_ADD_ATOM(troupe, troupe::msg, query_atom, "query")
CAF_ADD_ATOM(troupe, troupe::msg, wait_atom, "wait")
CAF_ADD_ATOM(troupe, troupe::msg, submit_atom, "submit")
CAF_ADD_ATOM(troupe, troupe::msg, finish_atom, "finish")
CAF_ADD_ATOM(troupe, troupe::msg, data_atom, "data")
CAF_ADD_ATOM(troupe, troupe::msg, subscribe_atom, "subscribe")
CAF_ADD_ATOM(troupe, troupe::msg, share_tick_atom, "sharetick")
CAF_ADD_ATOM(troupe, troupe::msg, agent_bye_atom, "agentbye")
CAF_ADD_ATOM(troupe, troupe::msg, agents_atom, "agents")
CAF_ADD_TYPE_ID(troupe, (troupe::msg::host_worker))
CAF_ADD_TYPE_ID(troupe, (troupe::msg::host_answer))
CAF_ADD_ATOM(troupe, troupe::msg, group_up_atom, "groupup")
CAF_ADD_ATOM(troupe, troupe::msg, interrupt_atom, "interrupt")
CAF_ADD_ATOM(troupe, troupe::msg, agent_leave_atom, "agentleave")
CAF_ADD_TYPE_ID(troupe, (troupe::msg::reduce_dropped))
CAF_ADD_ATOM(troupe, troupe::msg, ring_abort_atom, "ringabort")
CAF_ADD_ATOM(troupe, troupe::msg, cancel_atom, "cancel")
CAF_ADD_ATOM(troupe, troupe::msg, inject_atom, "inject")
CAF_ADD_ATOM(troupe, troupe::msg, jobs_atom, "jobs")
CAF_ADD_ATOM(troupe, troupe::msg, job_end_atom, "jobend")
CAF_ADD_ATOM(troupe, troupe::msg, group_leave_atom, "groupleave")
CAF_END_TYPE_ID_BLOCK(troupe)
