#include "policies/noise_scale.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"

namespace troupe::policies {

std::optional<double> noise_estimate::b_noise() const {
  if (!(grad_sq > 0.0)) return std::nullopt;
  return trace_sigma / grad_sq;
}

std::optional<noise_estimate> estimate_noise(const std::vector<norm_point>& points) {
  double w = 0.0, wx = 0.0, wy = 0.0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    if (!(p.batch > 0.0) || !std::isfinite(p.batch) || !std::isfinite(p.sq_norm))
      throw input_error("estimate_noise: point " + std::to_string(i) +
                        " needs a finite batch > 0 and a finite squared norm");
    w += p.batch * p.batch;
    wx += p.batch;  // b^2 * (1/b)
    wy += p.batch * p.batch * p.sq_norm;
  }
  if (points.size() < 2) return std::nullopt;
  const double xbar = wx / w, ybar = wy / w;
  // Centered sums: stable when all x are close.
  double sxx = 0.0, sxy = 0.0;
  for (const auto& p : points) {
    const double dx = 1.0 / p.batch - xbar;
    const double wi = p.batch * p.batch;
    sxx += wi * dx * dx;
    sxy += wi * dx * (p.sq_norm - ybar);
  }
  // Distinct batch sizes differ by at least one sample, so sxx is far above rounding noise when
  // it is not zero; the relative test guards against b values equal up to rounding.
  if (!(sxx > 1e-12 * w * xbar * xbar)) return std::nullopt;
  noise_estimate e;
  e.trace_sigma = sxy / sxx;
  e.grad_sq = ybar - e.trace_sigma * xbar;
  return e;
}

std::optional<noise_estimate> estimate_noise(const std::vector<double>& worker_batches,
                                             const std::vector<double>& worker_sq_norms,
                                             double global_sq_norm) {
  if (worker_batches.size() != worker_sq_norms.size())
    throw input_error("estimate_noise: " + std::to_string(worker_batches.size()) + " batches but " +
                      std::to_string(worker_sq_norms.size()) + " norms");
  std::vector<norm_point> pts;
  double B = 0.0;
  for (std::size_t i = 0; i < worker_batches.size(); ++i) {
    if (worker_batches[i] < 0.0)
      throw input_error("estimate_noise: worker " + std::to_string(i) + " has a negative batch");
    if (worker_batches[i] == 0.0) continue;  // an idle worker has no gradient
    pts.push_back({worker_batches[i], worker_sq_norms[i]});
    B += worker_batches[i];
  }
  if (B <= 0.0) return std::nullopt;
  pts.push_back({B, global_sq_norm});
  return estimate_noise(pts);
}

std::optional<noise_estimate> estimate_noise_equal_batch(const std::vector<double>& worker_sq_norms,
                                                         double global_batch,
                                                         double global_sq_norm) {
  const double n = double(worker_sq_norms.size());
  if (n < 2 || !(global_batch > 0.0)) return std::nullopt;
  double local = 0.0;
  for (double v : worker_sq_norms) local += v;
  local /= n;
  const double b = global_batch / n;  // the assumption that makes it naive
  const double B = global_batch;
  noise_estimate e;
  e.grad_sq = (B * global_sq_norm - b * local) / (B - b);
  e.trace_sigma = (local - global_sq_norm) / (1.0 / b - 1.0 / B);
  return e;
}

noise_scale_tracker::noise_scale_tracker(double smoothing) : beta_(smoothing) {
  if (!(smoothing >= 0.0 && smoothing < 1.0))
    throw input_error("noise_scale_tracker: smoothing must be in [0, 1), got " +
                      std::to_string(smoothing));
}

void noise_scale_tracker::update(const noise_estimate& e) {
  if (!std::isfinite(e.trace_sigma) || !std::isfinite(e.grad_sq))
    throw input_error("noise_scale_tracker: non-finite estimate");
  s_ = beta_ * s_ + (1.0 - beta_) * e.trace_sigma;
  g_ = beta_ * g_ + (1.0 - beta_) * e.grad_sq;
  correction_ *= beta_;
  ++count_;
}

bool noise_scale_tracker::update(const std::vector<double>& worker_batches,
                                 const std::vector<double>& worker_sq_norms,
                                 double global_sq_norm) {
  const auto e = estimate_noise(worker_batches, worker_sq_norms, global_sq_norm);
  if (!e) return false;
  update(*e);
  return true;
}

std::optional<double> noise_scale_tracker::trace_sigma() const {
  if (count_ == 0) return std::nullopt;
  return s_ / (1.0 - correction_);
}

std::optional<double> noise_scale_tracker::grad_sq() const {
  if (count_ == 0) return std::nullopt;
  return g_ / (1.0 - correction_);
}

std::optional<double> noise_scale_tracker::b_noise() const {
  if (count_ == 0 || !(g_ > 0.0)) return std::nullopt;
  return s_ / g_;  // the bias corrections cancel in the ratio
}

}  // namespace troupe::policies
