#include "actors/observe/job_stats.hpp"

#include <algorithm>
#include <cmath>

#include "collectives/inproc/reduce_kernel.hpp"
#include "core/error.hpp"
#include "policies/imbalance.hpp"

namespace troupe::actors {

double reduced_sq_norm(const std::vector<std::shared_ptr<const std::vector<float>>>& buffers,
                       double total) {
  std::vector<const float*> ptrs;
  std::size_t n = 0;
  for (const auto& b : buffers) {
    if (!b) continue;
    if (!ptrs.empty() && b->size() != n)
      throw troupe::runtime_failure("gradient buffers differ in size");
    n = b->size();
    ptrs.push_back(b->data());
  }
  if (ptrs.empty() || total <= 0.0) return 0.0;
  // The job runs this while the members reduce, on a core they need: a block at a time, summed
  // over the workers in rank order (the shards' order) by the reduce kernel into a buffer that
  // stays in cache, then squared.
  double acc = 0.0;
  constexpr std::size_t block = 4096;
  std::vector<float> sum(block);
  for (std::size_t lo = 0; lo < n; lo += block) {
    const std::size_t m = std::min(n - lo, block);
    collectives::reduce_into(sum.data(), ptrs.data(), ptrs.size(), lo, m, {});
    acc += collectives::sq_norm(sum.data(), m);
  }
  return acc / (total * total);
}

void job_stats::begin_step(std::size_t workers) {
  replanned_ = false;
  batches_.assign(workers, 0.0);
  sq_norms_.assign(workers, 0.0);
  compute_.assign(workers, 0.0);
  global_sq_.reset();
}

void job_stats::on_worker(std::size_t rank, std::int64_t samples, double mean_sq_norm,
                          double compute_s) {
  if (rank >= batches_.size()) return;
  if (batches_[rank] > 0) {
    replanned_ = true;
    batches_[rank] += static_cast<double>(samples);
    compute_[rank] += compute_s;
    return;
  }
  batches_[rank] = static_cast<double>(samples);
  sq_norms_[rank] = mean_sq_norm;
  compute_[rank] = compute_s;
}

void job_stats::end_step(const std::vector<std::shared_ptr<const std::vector<float>>>& sums,
                         std::int64_t total_samples) {
  end_step(reduced_sq_norm(sums, static_cast<double>(total_samples)));
}

void job_stats::end_step(double g) {
  std::vector<double> times;
  for (std::size_t r = 0; r < batches_.size(); ++r)
    if (batches_[r] > 0 && std::isfinite(compute_[r]) && compute_[r] >= 0.0)
      times.push_back(compute_[r]);
  step_imbalance_ = times.size() > 1 ? policies::imbalance_index(times) : 0.0;
  imbalance_sum_ += step_imbalance_;
  ++steps_;

  global_sq_ = g;
  if (!std::isfinite(g) || replanned_) return;
  for (double x : sq_norms_)
    if (!std::isfinite(x)) return;  // a diverged step says nothing about the noise
  // With two or more workers the global point (1/B) differs from every worker's (1/b_i), so
  // there are always two distinct batch sizes; a single worker gives no estimate (skipped).
  tracker_.update(batches_, sq_norms_, g);
}

std::vector<std::int64_t> job_stats::step_samples() const {
  return {batches_.begin(), batches_.end()};  // whole counts, exact in a double
}

double job_stats::mean_imbalance() const {
  return steps_ > 0 ? imbalance_sum_ / static_cast<double>(steps_) : 0.0;
}

}  // namespace troupe::actors
