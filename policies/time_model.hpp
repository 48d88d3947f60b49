#pragma once
// Per-worker step-time model t(b) = a + c*b, fitted online from observed (batch, seconds) pairs.
//
// a is the fixed cost of a step (launch, synchronisation, optimizer), c the cost per sample. The
// rebalancer (rebalance.hpp) splits the global batch so that every worker's predicted t_i(b_i)
// is equal (LB-BSP, Chen et al. 2020; Whale, Jia et al. 2022).
//
// Fit: exponentially weighted least squares with forgetting factor lambda in (0, 1]. Every new
// observation multiplies the running sums by lambda before adding itself, so an observation k
// steps old has weight lambda^k and a device that slows down is followed within ~1/(1-lambda)
// steps. With weights w_k:
//   mean_b = sum w b / W,  mean_t = sum w t / W,
//   c = sum w (b - mean_b)(t - mean_t) / sum w (b - mean_b)^2,   a = mean_t - c * mean_b.
// Robustness, in this order:
//   - no observation: the model is not ready (fit() throws);
//   - the batches barely vary (weighted std(b) < min_relative_spread * mean_b, e.g. every step had
//     the same slice, the common case before the first rebalance): the slope is not identifiable,
//     so a comes from a prior (prior_intercept, capped at prior_cap * mean_t so that c stays
//     positive) and c = (mean_t - a) / mean_b, i.e. proportional scaling through the prior;
//   - the fit gives c <= 0 (noise) or a < 0: refit through the origin, c = sum w b t / sum w b^2,
//     a = 0, because a negative fixed cost or a free sample would break the split.
#include <cstddef>

namespace troupe::policies {

// A fitted model: predicted seconds for a slice of b samples.
struct linear_time {
  double a = 0.0;  // seconds per step, independent of the slice
  double c = 0.0;  // seconds per sample

  double at(double b) const { return a + c * b; }
  // The slice that finishes at time t (may be negative when t < a).
  double batch_for(double t) const { return (t - a) / c; }
};

struct time_model_options {
  double forgetting = 0.9;            // lambda in (0, 1]; 1 = plain least squares
  double prior_intercept = 0.0;       // seconds; used when the slope is not identifiable
  double prior_cap = 0.5;             // the prior never exceeds this fraction of mean_t
  double min_relative_spread = 0.02;  // below: treat all batches as equal
};

class time_model {
 public:
  explicit time_model(time_model_options options = {});

  // Records one step. batch > 0 and seconds >= 0, finite; throws troupe::input_error otherwise.
  void observe(double batch, double seconds);

  bool ready() const { return weight_ > 0.0; }
  std::size_t observations() const { return count_; }
  // True when the last fit() could identify the slope from the spread of batch sizes.
  bool slope_identified() const;

  // The current fit; throws troupe::input_error when no observation has been made.
  linear_time fit() const;
  double predict(double batch) const { return fit().at(batch); }

  const time_model_options& options() const { return options_; }

 private:
  time_model_options options_;
  std::size_t count_ = 0;
  // Exponentially weighted sums of 1, b, b^2, t, b*t.
  double weight_ = 0.0, sb_ = 0.0, sbb_ = 0.0, st_ = 0.0, sbt_ = 0.0;
};

}  // namespace troupe::policies
