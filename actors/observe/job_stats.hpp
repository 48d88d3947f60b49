#pragma once
// Per-step statistics a job keeps for the live metrics and the report:
//
// - imbalance index: the coefficient of variation of the step's per-worker compute seconds
//   (policies/imbalance.hpp), over the workers that had a slice; the report carries its mean over
//   the job's steps;
// - gradient noise scale B_noise = tr(Sigma) / |G|^2 (policies/noise_scale.hpp): every worker
//   reports |G_{b_i}|^2 of its MEAN gradient with its slice b_i; the global |G_B|^2 of the reduced
//   (mean over the whole batch) gradient comes from the parameter-server shards (each squares its
//   slice of the mean it forms anyway), or in allreduce mode is computed here from the workers'
//   gradient SUMS, one pass over the buffers. Regressing the squared norms on 1/b stays unbiased
//   under a weighted split, where the equal-batch estimator would not.
// Plain C++ (no CAF): the job calls it from its step handlers.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "policies/noise_scale.hpp"

namespace troupe::actors {

// |sum_k buffers[k] / total|^2; null buffers are skipped. Throws on buffers of unequal size.
double reduced_sq_norm(const std::vector<std::shared_ptr<const std::vector<float>>>& buffers,
                       double total);

class job_stats {
 public:
  explicit job_stats(double smoothing = 0.95) : tracker_(smoothing) {}

  void begin_step(std::size_t workers);
  // A worker's answer: its slice, |G_b|^2 of its mean gradient and its compute seconds. A second
  // answer from the same rank in one step (a re-planned slice) adds its samples and seconds, and
  // the step gives no noise point: |G|^2 of the two slices together is not known.
  void on_worker(std::size_t rank, std::int64_t samples, double mean_sq_norm, double compute_s);
  // Every worker reported; `sums` are the gradient sums by rank (null: no slice).
  void end_step(const std::vector<std::shared_ptr<const std::vector<float>>>& sums,
                std::int64_t total_samples);
  // The same with |G_B|^2 of the step's mean gradient already known (ps mode: the shards' parts).
  void end_step(double global_sq_norm);

  // This step so far, by rank: samples computed and device seconds (re-planned slices added),
  // and whether some rank computed a second slice.
  std::vector<std::int64_t> step_samples() const;
  const std::vector<double>& step_compute() const { return compute_; }
  bool step_replanned() const { return replanned_; }
  double step_imbalance() const { return step_imbalance_; }
  double mean_imbalance() const;
  std::optional<double> noise_scale() const { return tracker_.b_noise(); }
  std::optional<double> step_global_sq_norm() const { return global_sq_; }

  std::int64_t rebalances = 0;  // split changes applied (the report's `rebalances`)

 private:
  policies::noise_scale_tracker tracker_;
  std::vector<double> batches_, sq_norms_, compute_;
  bool replanned_ = false;  // this step had a second slice on some rank
  double step_imbalance_ = 0.0;
  double imbalance_sum_ = 0.0;
  std::int64_t steps_ = 0;
  std::optional<double> global_sq_;
};

}  // namespace troupe::actors
