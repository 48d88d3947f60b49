#include "policies/sync_period.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.hpp"

namespace troupe::policies {

namespace {

void validate(const sync_period_options& o) {
  if (o.tau_max < 1) throw input_error("sync period: tau_max must be >= 1");
  if (!(o.kappa > 0.0) || !std::isfinite(o.kappa))
    throw input_error("sync period: kappa must be finite and > 0");
  if (!(o.lr_power >= 0.0)) throw input_error("sync period: lr_power must be >= 0");
  if (!(o.loss_smoothing >= 0.0 && o.loss_smoothing < 1.0))
    throw input_error("sync period: loss_smoothing must be in [0, 1)");
}

// ceil that forgives rounding: 5.0000000001 is 5, not 6.
int clamp_ceil(double x, int tau_max) {
  if (!(x < double(tau_max))) return tau_max;  // also catches +inf
  return std::clamp(static_cast<int>(std::ceil(x - 1e-9)), 1, tau_max);
}

}  // namespace

int initial_sync_period(double comm_seconds, double compute_seconds,
                        const sync_period_options& options) {
  validate(options);
  if (!(comm_seconds >= 0.0) || !std::isfinite(comm_seconds))
    throw input_error("initial_sync_period: communication seconds must be finite and >= 0");
  if (!(compute_seconds > 0.0) || !std::isfinite(compute_seconds))
    throw input_error("initial_sync_period: compute seconds must be finite and > 0");
  return clamp_ceil(options.kappa * std::sqrt(comm_seconds / compute_seconds), options.tau_max);
}

int adacomm_period(double loss_now, double loss_0, double lr_now, double lr_0, int tau_0,
                   const sync_period_options& options) {
  validate(options);
  if (tau_0 < 1) throw input_error("adacomm_period: tau_0 must be >= 1");
  if (!(lr_now > 0.0) || !(lr_0 > 0.0) || !std::isfinite(lr_now) || !std::isfinite(lr_0))
    throw input_error("adacomm_period: learning rates must be finite and > 0");
  if (!(loss_0 > options.loss_floor) || !std::isfinite(loss_0))
    throw input_error("adacomm_period: initial loss must be finite and above the loss floor");
  if (!(loss_now >= 0.0) || !std::isfinite(loss_now))
    throw input_error("adacomm_period: loss must be finite and >= 0");
  // Below the floor the bound says: synchronise every step.
  const double loss_ratio =
      std::max(0.0, loss_now - options.loss_floor) / (loss_0 - options.loss_floor);
  const double lr_ratio = std::pow(lr_0 / lr_now, options.lr_power);
  return clamp_ceil(double(tau_0) * std::sqrt(loss_ratio * lr_ratio), options.tau_max);
}

sync_tuner::sync_tuner(double comm_seconds, double compute_seconds, double lr_0,
                       sync_period_options options)
    : options_(options),
      tau_0_(initial_sync_period(comm_seconds, compute_seconds, options)),
      period_(tau_0_),
      lr_0_(lr_0),
      last_lr_(lr_0) {
  if (!(lr_0 > 0.0) || !std::isfinite(lr_0))
    throw input_error("sync_tuner: learning rate must be finite and > 0");
}

void sync_tuner::observe_loss(double loss) {
  if (!(loss >= 0.0) || !std::isfinite(loss))
    throw input_error("sync_tuner: loss must be finite and >= 0");
  if (!loss_0_) {
    if (!(loss > options_.loss_floor))
      throw input_error("sync_tuner: the first loss must be above the loss floor");
    loss_0_ = loss;
  }
  const double b = options_.loss_smoothing;
  ema_ = b * ema_ + (1.0 - b) * loss;
  correction_ *= b;
}

std::optional<double> sync_tuner::smoothed_loss() const {
  if (!loss_0_) return std::nullopt;
  return ema_ / (1.0 - correction_);
}

sync_decision sync_tuner::decide(double lr_now) {
  sync_decision d;
  const auto loss = smoothed_loss();
  if (!loss) {
    d.period = period_;
    d.reason = "hold: no loss observed yet";
    return d;
  }
  int next = adacomm_period(*loss, *loss_0_, lr_now, lr_0_, tau_0_, options_);
  const bool lr_changed = lr_now != last_lr_;
  // At a constant learning rate the schedule only comes down; a loss bump is noise.
  if (!lr_changed) next = std::min(next, period_);
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s: loss %.4g / %.4g, lr %.3g / %.3g, tau %d -> %d",
                next == period_ ? "hold" : "adacomm", *loss, *loss_0_, lr_now, lr_0_, period_,
                next);
  d.reason = buf;
  d.changed = next != period_;
  d.period = period_ = next;
  last_lr_ = lr_now;
  return d;
}

}  // namespace troupe::policies
