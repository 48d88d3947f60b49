#pragma once
// Batch split across heterogeneous workers: equal-finish split, and a rebalancer that moves the
// live split toward it with damping and hysteresis.
//
// Equal-finish split (LB-BSP, Chen et al., "Semi-Dynamic Load Balancing: Efficient Distributed
// Learning in Non-Dedicated Environments", SoCC 2020; Whale, Jia et al., ATC 2022): with per-worker
// time models t_i(b) = a_i + c_i b (time_model.hpp), the synchronous step takes
// max_i t_i(b_i). Over reals the minimum is reached when every worker above the floor m finishes
// at the same time T:
//   b_i(T) = max(m, (T - a_i) / c_i),   sum_i b_i(T) = B.
// sum_i b_i(T) is piecewise linear and increasing in T, so T is found exactly by walking the
// breakpoints T_i = a_i + c_i m in order. The real slices are then rounded to integers by largest
// remainder (floors, then +1 to the largest fractional parts) and fixed up greedily: while the
// slowest worker i can give one sample to the worker j with the smallest t_j(b_j + 1) and
// t_j(b_j + 1) < t_i(b_i), move it. At the fixed point no allocation has a smaller makespan:
// any better allocation must take a sample from i and so give one to some j, whose time is then
// at least t_j(b_j + 1) >= t_i(b_i). The integer result is therefore optimal.
//
// Rebalancer: the models are noisy and every change of split costs (data moves, caches go cold),
// so a decision is taken only when it is worth it:
//   gain  = (makespan(current) - makespan(target)) / makespan(current)
//   drift = sum_i |target_i - current_i| / (2B)     (fraction of samples out of place)
//   change iff gain > min_gain, or drift > min_drift and gain > 0.
// A change moves a fraction `damping` of the way toward the target (rounded to integers summing
// to B, at least one sample moved), so a single noisy measurement cannot swing the split.
// A current split that does not match (size differs, sum != B, below the floor) is replaced by
// the target outright: a membership or batch change is not a place for damping.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "policies/time_model.hpp"

namespace troupe::policies {

// Slices (summing to B, each >= min_per_worker) minimising max_i models[i].at(b_i).
// Throws troupe::input_error on an empty model list, c_i <= 0, a_i < 0, non-finite values,
// min_per_worker < 0 or B < n * min_per_worker.
std::vector<std::int64_t> equal_finish_split(const std::vector<linear_time>& models, std::int64_t B,
                                             std::int64_t min_per_worker = 1);

// The real-valued equal-finish slices and their common finish time T (before rounding).
struct real_split {
  std::vector<double> slices;
  double finish_time = 0.0;
};
real_split equal_finish_real(const std::vector<linear_time>& models, double B,
                             double min_per_worker = 1.0);

// max_i models[i].at(slices[i]); sizes must match.
double predicted_makespan(const std::vector<linear_time>& models,
                          const std::vector<std::int64_t>& slices);

// Rounds non-negative reals summing to B to integers summing to B by largest remainder, each at
// least min_per_worker (values below the floor are raised to it first).
std::vector<std::int64_t> round_largest_remainder(const std::vector<double>& values, std::int64_t B,
                                                  std::int64_t min_per_worker);

struct rebalance_options {
  double damping = 0.5;     // fraction of the way to the target per decision, (0, 1]
  double min_gain = 0.05;   // relative makespan gain that justifies a change
  double min_drift = 0.05;  // fraction of samples out of place that justifies a change
  std::int64_t min_per_worker = 1;
};

struct rebalance_decision {
  std::vector<std::int64_t> slices;  // the split to use next (== current when !changed)
  bool changed = false;
  double predicted_makespan = 0.0;  // of `slices`, seconds
  double current_makespan = 0.0;    // of the current split (0 when it did not match)
  double target_makespan = 0.0;     // of the equal-finish target
  std::string reason;               // one line for logs
};

class rebalancer {
 public:
  explicit rebalancer(rebalance_options options = {});
  rebalance_decision decide(const std::vector<linear_time>& models,
                            const std::vector<std::int64_t>& current, std::int64_t B) const;
  const rebalance_options& options() const { return options_; }

 private:
  rebalance_options options_;
};

// sum_i |a_i - b_i| / (2 * sum_i a_i): the fraction of samples that sit on a different worker.
double split_distance(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b);

// Steps until re-converged: the first index k such that every split from history[k] on is within
// `tolerance` (split_distance) of `target`; nullopt when the last one is not. history[0] is the
// split right after the perturbation.
std::optional<std::size_t> steps_to_reconverge(
    const std::vector<std::vector<std::int64_t>>& history, const std::vector<std::int64_t>& target,
    double tolerance = 0.02);
// As above with the final split of the history as the target (the split it settled on).
std::optional<std::size_t> steps_to_reconverge(
    const std::vector<std::vector<std::int64_t>>& history, double tolerance = 0.02);

}  // namespace troupe::policies
