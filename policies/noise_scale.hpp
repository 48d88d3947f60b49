#pragma once
// Gradient noise scale from per-worker gradient norms with UNEQUAL per-worker batches.
//
// Source: McCandlish, Kaplan, Amodei et al., "An Empirical Model of Large-Batch Training" (2018),
// section 2.2 and appendix A.1. For the mean gradient G_b over b i.i.d. samples,
//   E |G_b|^2 = |G|^2 + tr(Sigma) / b,
// with G the true gradient and Sigma the per-sample gradient covariance. The simple noise scale
//   B_noise = tr(Sigma) / |G|^2 = S / |G|^2
// is the batch size at which gradient noise and signal are comparable. Training by the equations
// of section 2.2 is most efficient near B ~ B_noise.
//
// Estimator. Each step, worker i reports |G_{b_i}|^2 (squared norm of the MEAN of its b_i
// per-sample gradients) and the reduction gives |G_B|^2 for B = sum b_i. The expectation is
// linear in x = 1/b, so we fit y = G2 + S x by weighted least squares over the points
// (1/b_i, |G_{b_i}|^2) and (1/B, |G_B|^2):
//   S  = sum w (x - xbar)(y - ybar) / sum w (x - xbar)^2,   G2 = ybar - S xbar,
// with weights w = b^2: in the noise-dominated regime (S/b >> |G|^2, the usual one for a worker
// slice) Var|G_b|^2 ~ 2 tr(Sigma^2) / b^2, so b^2 is the inverse-variance weight; on the
// synthetic test it halves the per-step spread of |G|^2 against w = 1 (w = b sits in between).
// The weights depend only on the batch sizes, so both estimates are linear in the y's and
// therefore unbiased whatever the split (the worker and global points are correlated; ignoring
// that costs efficiency, not bias). With two points this is exactly
// McCandlish's two-batch estimator (appendix A.1):
//   |G|^2 = (B_big |G_big|^2 - B_small |G_small|^2) / (B_big - B_small),
//   S     = (|G_small|^2 - |G_big|^2) / (1/B_small - 1/B_big).
// Per-step estimates are very noisy (G2 may even come out negative), so, as the appendix
// recommends, S and |G|^2 are smoothed SEPARATELY by exponential moving averages and B_noise is
// the ratio of the averages, not the average of per-step ratios (which is biased).
//
// Naive estimator (for comparison; the AdaptDL / Pollux implementation): assumes every worker had
// the mean batch B/n, averages the worker norms as if they were one |G_{B/n}|^2 and applies the
// two-batch formula. Under a weighted split E[mean_i |G_{b_i}|^2] = |G|^2 + S mean_i(1/b_i) and
// mean(1/b_i) > n/B (Jensen), so S is overestimated, badly when some slices are small.
#include <optional>
#include <vector>

namespace troupe::policies {

struct norm_point {
  double batch = 0.0;    // samples behind this mean gradient
  double sq_norm = 0.0;  // |G_batch|^2 of the mean gradient
};

struct noise_estimate {
  double trace_sigma = 0.0;  // S = tr(Sigma)
  double grad_sq = 0.0;      // |G|^2
  // S / |G|^2; nullopt when |G|^2 <= 0 (noise dominated: no finite estimate).
  std::optional<double> b_noise() const;
};

// WLS fit over arbitrary points (weights = batch^2). nullopt when fewer than two distinct batch
// sizes. Throws troupe::input_error on batch <= 0 or non-finite values.
std::optional<noise_estimate> estimate_noise(const std::vector<norm_point>& points);

// One step of a data-parallel job: worker slices b_i with their |G_{b_i}|^2, and |G_B|^2 of the
// reduced gradient (B = sum b_i). Workers with b_i = 0 are skipped.
std::optional<noise_estimate> estimate_noise(const std::vector<double>& worker_batches,
                                             const std::vector<double>& worker_sq_norms,
                                             double global_sq_norm);

// The naive equal-batch estimator described above (B = global_batch, n = worker count).
std::optional<noise_estimate> estimate_noise_equal_batch(const std::vector<double>& worker_sq_norms,
                                                         double global_batch,
                                                         double global_sq_norm);

// EMA smoothing of S and |G|^2 separately, with Adam-style bias correction so that early values
// are not pulled toward zero: ema_k = beta ema_{k-1} + (1 - beta) x_k, reported ema_k / (1 -
// beta^k).
class noise_scale_tracker {
 public:
  explicit noise_scale_tracker(double smoothing = 0.99);

  void update(const noise_estimate& e);
  // Convenience: estimate from one step and update; returns false when the step had no estimate.
  bool update(const std::vector<double>& worker_batches, const std::vector<double>& worker_sq_norms,
              double global_sq_norm);

  std::size_t updates() const { return count_; }
  std::optional<double> trace_sigma() const;
  std::optional<double> grad_sq() const;
  // Smoothed S / smoothed |G|^2; nullopt before the first update or while |G|^2 <= 0.
  std::optional<double> b_noise() const;

 private:
  double beta_;
  double s_ = 0.0, g_ = 0.0, correction_ = 1.0;  // correction_ = beta^k
  std::size_t count_ = 0;
};

}  // namespace troupe::policies
