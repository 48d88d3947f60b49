#include "policies/shares.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.hpp"

namespace troupe::policies {

std::vector<double> fixed_shares(const std::vector<double>& weights) {
  if (weights.empty()) throw input_error("fixed_shares: no jobs");
  double sum = 0.0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (!(weights[i] >= 0.0) || !std::isfinite(weights[i]))
      throw input_error("fixed_shares: weight " + std::to_string(i) +
                        " must be finite and >= 0, got " + std::to_string(weights[i]));
    sum += weights[i];
  }
  if (!(sum > 0.0)) throw input_error("fixed_shares: all weights are zero");
  std::vector<double> out(weights.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = weights[i] / sum;
  return out;
}

double statistical_efficiency(double b_noise, double batch, double b0) {
  if (!(b_noise >= 0.0) || !(batch > 0.0) || !(b0 > 0.0) || !std::isfinite(b_noise) ||
      !std::isfinite(batch) || !std::isfinite(b0))
    throw input_error("statistical_efficiency: need B_noise >= 0 and B, B0 > 0 (finite)");
  return (b_noise + b0) / (b_noise + batch);
}

std::vector<double> apply_floor(const std::vector<double>& shares, double floor) {
  const std::size_t n = shares.size();
  if (!(floor >= 0.0) || double(n) * floor > 1.0 + 1e-12)
    throw input_error("apply_floor: " + std::to_string(n) + " jobs cannot each get " +
                      std::to_string(floor));
  auto out = fixed_shares(shares);
  std::vector<bool> pinned(n, false);
  // Each round pins at least one more entry or stops, so at most n rounds.
  for (std::size_t round = 0; round <= n; ++round) {
    double free_sum = 0.0;
    std::size_t pinned_count = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (pinned[i])
        ++pinned_count;
      else
        free_sum += out[i];
    }
    const double room = 1.0 - floor * double(pinned_count);
    bool again = false;
    for (std::size_t i = 0; i < n; ++i) {
      if (pinned[i]) {
        out[i] = floor;
        continue;
      }
      out[i] = free_sum > 0.0 ? out[i] * room / free_sum : room / double(n - pinned_count);
      if (out[i] < floor) {
        pinned[i] = true;
        again = true;
      }
    }
    if (!again) break;
  }
  return out;
}

share_decision adaptive_shares(const std::vector<job_share_state>& jobs, const share_options& o) {
  const std::size_t n = jobs.size();
  if (n == 0) throw input_error("adaptive_shares: no jobs");
  if (!(o.damping > 0.0 && o.damping <= 1.0))
    throw input_error("adaptive_shares: damping must be in (0, 1]");
  if (!(o.gamma >= 0.0) || !(o.min_change >= 0.0))
    throw input_error("adaptive_shares: gamma and min_change must be >= 0");

  std::vector<double> current(n);
  double current_sum = 0.0;
  for (std::size_t j = 0; j < n; ++j) {
    if (!(jobs[j].weight > 0.0) || !std::isfinite(jobs[j].weight))
      throw input_error("adaptive_shares: job " + std::to_string(j) + " needs a weight > 0");
    if (!(jobs[j].share >= 0.0) || !std::isfinite(jobs[j].share))
      throw input_error("adaptive_shares: job " + std::to_string(j) + " has an invalid share");
    current[j] = jobs[j].share;
    current_sum += current[j];
  }
  // A new job (or a first decision) may come with no shares at all: start from the weights.
  if (current_sum > 0.0) {
    for (auto& s : current) s /= current_sum;
  } else {
    std::vector<double> w(n);
    for (std::size_t j = 0; j < n; ++j) w[j] = jobs[j].weight;
    current = fixed_shares(w);
  }

  // Value per unit share; unknown values become the mean of the known ones.
  std::vector<double> value(n, 0.0);
  std::vector<bool> known(n, false);
  double known_sum = 0.0;
  std::size_t known_count = 0;
  for (std::size_t j = 0; j < n; ++j) {
    const auto& job = jobs[j];
    if (!(job.throughput > 0.0) || !(current[j] > 0.0) || !std::isfinite(job.throughput)) continue;
    const double e = job.b_noise ? statistical_efficiency(*job.b_noise, job.batch, job.b0) : 1.0;
    value[j] = job.throughput / current[j] * e;
    known[j] = true;
    known_sum += value[j];
    ++known_count;
  }
  const double mean_value = known_count ? known_sum / double(known_count) : 1.0;
  std::vector<double> raw(n);
  for (std::size_t j = 0; j < n; ++j) {
    const double v = known[j] ? value[j] : mean_value;
    // Relative to the mean so that pow() stays in range whatever the units.
    raw[j] = jobs[j].weight * std::pow(v / mean_value, o.gamma);
  }

  share_decision d;
  d.target = apply_floor(fixed_shares(raw), o.floor);
  std::vector<double> next(n);
  for (std::size_t j = 0; j < n; ++j) next[j] = current[j] + o.damping * (d.target[j] - current[j]);
  // The current shares may violate the floor (a job just joined); the damped step is then
  // floored too, so that the promise holds at every step.
  next = apply_floor(next, o.floor);
  double max_move = 0.0;
  for (std::size_t j = 0; j < n; ++j) max_move = std::max(max_move, std::abs(next[j] - current[j]));

  char buf[96];
  if (max_move < o.min_change) {
    d.shares = current;
    std::snprintf(buf, sizeof buf, "hold: largest move %.3f < %.3f", max_move, o.min_change);
  } else {
    d.shares = next;
    d.changed = true;
    std::snprintf(buf, sizeof buf, "adapt: largest move %.3f toward goodput target", max_move);
  }
  d.reason = buf;
  return d;
}

}  // namespace troupe::policies
