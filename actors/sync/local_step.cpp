#include "actors/sync/local_step.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/error.hpp"
#include "core/median.hpp"

namespace troupe::actors {

void local_step_apply(local_replica& rep, const allreduce_session& session,
                      const replica_step& step, bool average, bool skip_step) {
  const std::size_t n = step.count;
  if (!rep.opt.replicated) {
    rep.opt.replicated = models::make_optimizer(session.optimizer, n);
    // A resumed run: the checkpoint's optimizer state (member 0's at its average).
    if (rep.opt.resume) rep.opt.replicated->load_state(*rep.opt.resume);
    rep.opt.resume.reset();
  }
  rep.scratch.resize(n);
  // A member without samples has no gradient: its replica waits for the next average instead of
  // letting momentum move it on nothing.
  if (step.before_apply) step.before_apply();
  if (!skip_step && step.contributed && step.samples > 0) {
    const float b = static_cast<float>(step.samples);
    for (std::size_t i = 0; i < n; ++i) rep.scratch[i] = step.grad[i] / b;
    rep.opt.replicated->step(step.params, rep.scratch.data());
    rep.samples_since_average += step.samples;
  }
  if (!skip_step) rep.stepped = step.step;
  if (!average) return;

  reduce_call call;
  call.rank = step.rank;
  call.count = n;
  call.deadline = steady::now() + std::chrono::duration_cast<steady::duration>(
                                      std::chrono::duration<double>(session.deadline_seconds));
  call.abort = session.abort;
  double w = static_cast<double>(rep.samples_since_average);
  if (w > 0) {
    const float wf = static_cast<float>(w);
    for (std::size_t i = 0; i < n; ++i) rep.scratch[i] = step.params[i] * wf;
    call.data = rep.scratch.data();
  }
  // Member 0 brings in the replicas of ranks out of the membership that trained since the last
  // average (a lost member's): its samples count, as if it were there.
  if (step.rank == 0)
    for (const auto& f : session.fold) {
      const float wf = static_cast<float>(f.replica->samples_since_average);
      if (!(wf > 0) || f.params->values.size() != n) continue;
      if (!call.data) {
        std::fill(rep.scratch.begin(), rep.scratch.end(), 0.0f);
        call.data = rep.scratch.data();
      }
      const float* p = f.params->values.data();
      for (std::size_t i = 0; i < n; ++i) rep.scratch[i] += p[i] * wf;
      w += static_cast<double>(wf);
    }
  call.weight = w;
  call.divide_by_total_weight = true;
  const auto mean = session.reducer_for(step.rank, "local SGD").reduce(call);
  if (!(mean.total_weight > 0))
    throw troupe::runtime_failure("local SGD: no member trained since the last parameter average");
  std::copy(mean.values.data(), mean.values.data() + n, step.params);
  rep.samples_since_average = 0;
}

void fill_sync_report(job_report& r, const config::job_config& cfg, const local_sync* local,
                      std::int64_t steps) {
  r.sync.mode = cfg.sync.mode;
  if (!local) {
    r.sync.period = 1;
    r.sync.rounds = steps;
    return;
  }
  r.sync.period = local->period();
  r.sync.rounds = local->rounds();
  for (const auto& c : local->history()) r.sync.period_history.push_back({c.step, c.period});
}

namespace {

// The tuner refuses a first loss at the floor (0); such a run has nothing left to average for.
double loss_for_tuner(double loss) {
  return std::max(loss, 1e-12);
}

}  // namespace

local_sync::local_sync(const config::job_config& cfg, local_sync_options options)
    : options_(options), lr_(cfg.optimizer.lr) {
  adaptive_ = cfg.sync.adaptive_period;
  if (adaptive_ && options_.warmup < 1) throw input_error("local_sync: warmup must be >= 1");
  if (!adaptive_ && (cfg.sync.period < 1 || cfg.sync.period > std::numeric_limits<int>::max()))
    throw input_error("sync.period: must be a positive integer or \"adaptive\", got " +
                      std::to_string(cfg.sync.period));
  period_ = adaptive_ ? 1 : static_cast<int>(cfg.sync.period);
  history_.push_back({0, period_,
                      adaptive_ ? "warm-up: average every step to measure comm and compute"
                                : "sync.period: " + std::to_string(period_)});
}

bool local_sync::averages(std::int64_t, bool last) const {
  return last || since_average_ + 1 >= period_;
}

std::optional<std::string> local_sync::on_applied(std::int64_t step, bool averaged,
                                                  double compute_seconds, double reduce_seconds,
                                                  double loss) {
  if (averaged) {
    ++rounds_;
    since_average_ = 0;
  } else {
    ++since_average_;
  }
  if (!adaptive_) return std::nullopt;
  char buf[200];
  if (!tuner_) {
    warm_comm_.push_back(reduce_seconds);
    warm_compute_.push_back(compute_seconds);
    if (std::isfinite(loss)) warm_loss_.push_back(loss_for_tuner(loss));
    if (static_cast<int>(warm_comm_.size()) < options_.warmup) return std::nullopt;
    // Medians: one step stalled by another process must not set the period of the whole run.
    const double comm = median(warm_comm_), compute = std::max(median(warm_compute_), 1e-6);
    tuner_.emplace(comm, compute, lr_, options_.policy);
    for (double l : warm_loss_) tuner_->observe_loss(l);
    period_ = tuner_->period();
    std::snprintf(
        buf, sizeof buf,
        "sync period tau_0 = %d from comm %.2f ms / compute %.2f ms per step (ratio %.2f)", period_,
        comm * 1e3, compute * 1e3, comm / compute);
    history_.push_back({step + 1, period_, buf});
    return std::string(buf) + " (after step " + std::to_string(step) + ")";
  }
  // A diverged step (inf, nan) says nothing about the schedule.
  if (std::isfinite(loss)) tuner_->observe_loss(loss_for_tuner(loss));
  if (!averaged) return std::nullopt;
  // The end of an interval: AdaComm's period for the next one.
  const auto d = tuner_->decide(lr_);
  if (!d.changed) return std::nullopt;
  period_ = d.period;
  history_.push_back({step + 1, period_, d.reason});
  return "sync period " + d.reason + " (after step " + std::to_string(step) + ")";
}

}  // namespace troupe::actors
