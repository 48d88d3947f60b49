#include "policies/imbalance.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace troupe::policies {

namespace {
double checked_mean(const std::vector<double>& v, const char* what) {
  if (v.empty()) throw input_error(std::string(what) + ": no values");
  double sum = 0.0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i]) || v[i] < 0.0)
      throw input_error(std::string(what) + ": value " + std::to_string(i) +
                        " must be finite and >= 0, got " + std::to_string(v[i]));
    sum += v[i];
  }
  return sum / double(v.size());
}
}  // namespace

double coefficient_of_variation(const std::vector<double>& values) {
  const double mean = checked_mean(values, "coefficient_of_variation");
  if (mean == 0.0) return 0.0;
  // Two-pass variance: no cancellation when the values are large and close together.
  double ss = 0.0;
  for (double v : values) ss += (v - mean) * (v - mean);
  return std::sqrt(ss / double(values.size())) / mean;
}

std::vector<double> busy_fractions(const std::vector<double>& compute_seconds,
                                   double wall_seconds) {
  if (!(wall_seconds > 0.0) || !std::isfinite(wall_seconds))
    throw input_error("busy_fractions: wall time must be finite and > 0");
  checked_mean(compute_seconds, "busy_fractions");
  std::vector<double> out(compute_seconds.size());
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = std::min(1.0, compute_seconds[i] / wall_seconds);
  return out;
}

double straggler_ratio(const std::vector<double>& step_times) {
  const double mean = checked_mean(step_times, "straggler_ratio");
  if (mean == 0.0) return 1.0;
  return *std::max_element(step_times.begin(), step_times.end()) / mean;
}

}  // namespace troupe::policies
