#pragma once
// Imbalance index: how unevenly the workers of a synchronous step are loaded.
//
//   CV(x) = sigma(x) / mean(x),   sigma the population standard deviation (divide by n).
//
// Applied to per-worker step (compute) times, 0 means every worker finishes together; the
// straggler wait of the others is roughly mean * CV * sqrt(n - 1) at worst. Applied to busy
// fractions (compute / step wall time) it says how unevenly devices are used. CV and max/mean are
// the two load-imbalance metrics HPC performance tools commonly report; CV is scale-free, so one
// threshold serves fast and slow jobs alike.
#include <vector>

namespace troupe::policies {

// Population coefficient of variation. Empty input or a negative / non-finite value throws
// troupe::input_error; an all-zero input gives 0 (nothing to be unbalanced about).
double coefficient_of_variation(const std::vector<double>& values);

// CV of per-worker step times (seconds).
inline double imbalance_index(const std::vector<double>& step_times) {
  return coefficient_of_variation(step_times);
}

// busy_i = compute_i / wall (clamped to [0, 1]); throws when sizes differ or wall <= 0.
std::vector<double> busy_fractions(const std::vector<double>& compute_seconds, double wall_seconds);

// CV of busy fractions.
inline double busy_imbalance(const std::vector<double>& busy) {
  return coefficient_of_variation(busy);
}

// max / mean: the slowdown of a synchronous step against a perfectly balanced one (1 = balanced).
double straggler_ratio(const std::vector<double>& step_times);

}  // namespace troupe::policies
