#pragma once
// `sync: local` (local SGD): every worker trains its own parameter replica with
// its own optimizer replica and the replicas are averaged every tau steps.
//
//   job: every member reported step_done -> local_cmd(step, ranks, average) +
//        local_ref<allreduce_session> to EVERY member of the generation
//   worker: mean of its own gradient -> its optimizer replica -> its parameter replica; with
//        `average`: allreduce(params * samples since the last average) / total samples -> its
//        replica -> applied
//   job: every member applied -> version step + 1 on every replica, next step
//
// The barrier per step is the job's control plane (a few small messages in one process); the
// data plane, the parameter average, runs only every tau steps, which is what local SGD saves
// when a link is slow (a `delay` fault holds back a worker's contribution to each averaging
// round, not its local steps).
//
// The average is weighted by the samples each replica trained on since the last average (a
// member with no samples contributes nothing and takes the result): with period 1 and plain SGD
// it is exactly gradient averaging, sum_i b_i (p - lr g_i / b_i) / B = p - lr sum_i g_i / B,
// whatever the split. Optimizer state (momentum, Adam moments) stays per replica and is never
// averaged, as in Lin et al., "Don't use large mini-batches, use local SGD" (ICLR 2020).
//
// The job forces an average on the last step (and on the step where max_seconds runs out), so
// the final replicas are bit-identical (the job's end-of-run check) and the job's param_store
// (replica 0) holds the average that evaluation and the report see.
//
// A lost member: the job owns every rank's replica and optimizer state (local_replica), so what
// the lost member trained since the last average joins the next one (allreduce_session::fold,
// added by member 0 weighted by its samples); the survivors compute its unfinished slices, and
// a restarted worker goes on with its own optimizer state from a member's parameters. Lost while
// the members apply, the job applies its local step from its gradient, and an average nobody
// completed runs again with the members' local steps already applied (local_cmd::average_only).
// With period 1 and SGD that gives the fault-free model; with a longer period, local SGD's over
// the survivors.
//
// The period: `sync.period: N` fixed, or `adaptive` (AdaComm, policies/sync_period.hpp): the
// first `warmup` steps average every step and measure the communication (the reduce phase of an
// averaging step) and the compute (dispatch to last step_done) seconds; tau_0 comes from their
// ratio, and at the end of every interval tau follows the smoothed loss down.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/common/report.hpp"
#include "actors/sync/allreduce_step.hpp"
#include "core/config.hpp"
#include "policies/sync_period.hpp"

namespace troupe::actors {

// -- worker side ---------------------------------------------------------------------------

// A rank's optimizer replica and what it trained since the last average. The job owns one per
// rank (every incarnation of the rank's worker uses it), so a lost member's training is still
// there: it joins the next average, and a restarted worker goes on with its optimizer state.
struct local_replica {
  replica_optimizer opt;
  std::int64_t samples_since_average = 0;
  std::int64_t stepped = -1;   // the last step whose local step this replica applied
  std::vector<float> scratch;  // mean gradient, then weighted parameters
};

// One worker's local step (unless `skip_step`: an average run again after an aborted one, the
// local step being applied already), then (average) the parameter average. Member 0 of an
// averaging session also brings in the replicas of session.fold. Throws
// collectives::collective_error (deadline, abort) or troupe::runtime_failure.
void local_step_apply(local_replica& rep, const allreduce_session& session,
                      const replica_step& step, bool average, bool skip_step = false);

// -- job side ------------------------------------------------------------------------------

struct period_change {
  std::int64_t step = 0;  // the first step trained with the new period
  int period = 1;
  std::string reason;
};

struct local_sync_options {
  int warmup = 5;  // adaptive: steps averaged every step to measure comm and compute
  policies::sync_period_options policy;
};

// The averaging schedule. Plain C++ (no CAF, no clock): the job feeds it timings and losses.
class local_sync {
 public:
  // Throws input_error when `cfg.sync.period` is not a positive int (and not adaptive).
  explicit local_sync(const config::job_config& cfg, local_sync_options options = {});

  // Does step `step` end with an average? `last`: the job stops after it.
  bool averages(std::int64_t step, bool last) const;
  // After step `step` is applied: its compute and reduce phase seconds and its mean loss. Returns
  // a line to log when the period changed.
  std::optional<std::string> on_applied(std::int64_t step, bool averaged, double compute_seconds,
                                        double reduce_seconds, double loss);

  bool adaptive() const { return adaptive_; }
  int period() const { return period_; }
  std::int64_t rounds() const { return rounds_; }
  const std::vector<period_change>& history() const { return history_; }

 private:
  local_sync_options options_;
  bool adaptive_ = false;
  int period_ = 1;
  double lr_ = 0.0;
  std::int64_t since_average_ = 0;  // local steps since the last average
  std::int64_t rounds_ = 0;
  std::vector<double> warm_comm_, warm_compute_, warm_loss_;
  std::optional<policies::sync_tuner> tuner_;
  std::vector<period_change> history_;
};

// The report's `sync` object: for ps and allreduce one reduction per step; for local the final
// period, the averaging rounds and the period history.
void fill_sync_report(job_report& r, const config::job_config& cfg, const local_sync* local,
                      std::int64_t steps);

}  // namespace troupe::actors
