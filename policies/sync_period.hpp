#pragma once
// Local-SGD synchronisation period (how many local steps between model averages): AdaComm.
//
// Source: Wang & Joshi, "Adaptive Communication Strategies to Achieve the Best Error-Runtime
// Trade-off in Local-Update SGD", SysML 2019. With compute time Y per local step, communication
// delay D per average, learning rate eta and period tau, their error-after-wall-time-T bound is
//   (2 (F(x_0) - F_inf) / (eta T)) (Y + D / tau) + eta L sigma^2 / m + eta^2 L^2 sigma^2 (tau - 1),
// minimised at
//   tau* = sqrt( 2 (F(x_0) - F_inf) D / (eta^3 L^2 sigma^2 T) ).
// Re-applying this at the start of every interval l with the current loss as the new F(x_0)
// gives the schedule (the unknown L, sigma, T cancel in the ratio):
//   tau_l = ceil( tau_0 * sqrt( (F_l - F_inf) / (F_0 - F_inf) * (eta_0 / eta_l)^p ) ),
// clamped to [1, tau_max]. p = 3 (the default) follows tau* ~ eta^(-3/2) from the bound: a decayed
// learning rate shrinks the local-model drift that the period trades against, so averaging may be
// rarer. p = 0 ignores the learning rate (the constant-rate schedule). F_inf defaults to 0.
//
// Initial period from the measured communication/compute ratio r = D / Y: tau* is proportional
// to sqrt(D) for a fixed compute cost, so
//   tau_0 = clamp( ceil( kappa * sqrt(r) ), 1, tau_max ),
// kappa = 4 by default (r = 1, communication as costly as a step: average every 4 steps; r <=
// 1/16: every step, i.e. fully synchronous). More communication-bound -> larger tau_0. kappa
// stands for the constants of the bound that cannot be measured cheaply; AdaComm tunes tau_0 by a
// short grid search instead.
//
// Damping (sync_tuner): the loss is an EMA over the steps of the interval, and at an unchanged
// learning rate the period never goes up (the schedule is non-increasing by design; a noisy loss
// bump must not undo it).
#include <optional>
#include <string>

namespace troupe::policies {

struct sync_period_options {
  int tau_max = 64;
  double kappa = 4.0;           // tau_0 = ceil(kappa * sqrt(comm / compute))
  double lr_power = 3.0;        // p in (eta_0 / eta_l)^p inside the square root
  double loss_floor = 0.0;      // F_inf
  double loss_smoothing = 0.9;  // EMA factor for the tuner's loss
};

// tau_0 from seconds of communication per average and seconds of compute per local step.
int initial_sync_period(double comm_seconds, double compute_seconds,
                        const sync_period_options& options = {});

// The AdaComm schedule (formula above). Throws troupe::input_error on non-positive learning
// rates, loss_0 <= loss_floor, loss_now < 0 or tau_0 < 1.
int adacomm_period(double loss_now, double loss_0, double lr_now, double lr_0, int tau_0,
                   const sync_period_options& options = {});

struct sync_decision {
  int period = 1;
  bool changed = false;
  std::string reason;
};

// Holds loss_0, eta_0, tau_0 of the run and the smoothed loss; no clock: the caller decides when
// an interval ends.
class sync_tuner {
 public:
  // tau_0 from the comm/compute ratio measured on the first steps.
  sync_tuner(double comm_seconds, double compute_seconds, double lr_0,
             sync_period_options options = {});
  // The first observation becomes F_0.
  void observe_loss(double loss);
  // End of an interval: the period for the next one.
  sync_decision decide(double lr_now);

  int period() const { return period_; }
  int initial_period() const { return tau_0_; }
  std::optional<double> smoothed_loss() const;

 private:
  sync_period_options options_;
  int tau_0_;
  int period_;
  double lr_0_;
  double last_lr_;
  std::optional<double> loss_0_;
  double ema_ = 0.0, correction_ = 1.0;
};

}  // namespace troupe::policies
