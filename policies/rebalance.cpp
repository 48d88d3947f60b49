#include "policies/rebalance.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "core/error.hpp"

namespace troupe::policies {

namespace {

void validate_models(const std::vector<linear_time>& models) {
  if (models.empty()) throw input_error("equal_finish_split: no worker models");
  for (std::size_t i = 0; i < models.size(); ++i) {
    const auto& m = models[i];
    if (!std::isfinite(m.a) || !std::isfinite(m.c) || m.a < 0.0 || !(m.c > 0.0))
      throw input_error("equal_finish_split: worker " + std::to_string(i) +
                        " has an invalid time model (need a >= 0, c > 0; got a=" +
                        std::to_string(m.a) + ", c=" + std::to_string(m.c) + ")");
  }
}

std::string percent(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * x);
  return buf;
}

// Greedy fix-up to the integer optimum (see the header for why the fixed point is optimal).
void fix_up(const std::vector<linear_time>& models, std::vector<std::int64_t>& b, std::int64_t m) {
  const std::size_t n = b.size();
  if (n < 2) return;
  // Each move strictly lowers a sorted vector of finish times lexicographically, so this ends;
  // the cap only guards against floating-point surprises.
  const std::int64_t total = std::accumulate(b.begin(), b.end(), std::int64_t{0});
  for (std::int64_t guard = 0; guard < total + static_cast<std::int64_t>(n) * 4; ++guard) {
    std::size_t i = 0;
    for (std::size_t k = 1; k < n; ++k)
      if (models[k].at(double(b[k])) > models[i].at(double(b[i]))) i = k;
    if (b[i] <= m) return;
    std::size_t j = n;
    for (std::size_t k = 0; k < n; ++k) {
      if (k == i) continue;
      if (j == n || models[k].at(double(b[k] + 1)) < models[j].at(double(b[j] + 1))) j = k;
    }
    if (!(models[j].at(double(b[j] + 1)) < models[i].at(double(b[i])))) return;
    --b[i];
    ++b[j];
  }
}

}  // namespace

real_split equal_finish_real(const std::vector<linear_time>& models, double B,
                             double min_per_worker) {
  validate_models(models);
  const std::size_t n = models.size();
  if (!(min_per_worker >= 0.0) || !std::isfinite(B))
    throw input_error("equal_finish_split: min_per_worker must be >= 0 and B finite");
  if (B < double(n) * min_per_worker)
    throw input_error("equal_finish_split: global batch " + std::to_string(B) +
                      " is smaller than " + std::to_string(n) + " workers x minimum " +
                      std::to_string(min_per_worker));
  // Breakpoints: worker i leaves the floor once T exceeds a_i + c_i m.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  auto brk = [&](std::size_t i) { return models[i].at(min_per_worker); };
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return brk(x) < brk(y) || (brk(x) == brk(y) && x < y);
  });
  double T = brk(order.back());
  double inv = 0.0, a_over_c = 0.0;
  for (std::size_t k = 1; k <= n; ++k) {
    const auto& w = models[order[k - 1]];
    inv += 1.0 / w.c;
    a_over_c += w.a / w.c;
    // With the first k workers above the floor: sum_active (T - a)/c + (n - k) m = B.
    const double t = (B - double(n - k) * min_per_worker + a_over_c) / inv;
    if (k == n || t <= brk(order[k])) {
      T = std::max(t, brk(order[0]));
      break;
    }
  }
  real_split out;
  out.finish_time = T;
  out.slices.resize(n);
  for (std::size_t i = 0; i < n; ++i)
    out.slices[i] = std::max(min_per_worker, models[i].batch_for(T));
  return out;
}

std::vector<std::int64_t> round_largest_remainder(const std::vector<double>& values, std::int64_t B,
                                                  std::int64_t min_per_worker) {
  const std::size_t n = values.size();
  if (n == 0) throw input_error("round_largest_remainder: no values");
  if (min_per_worker < 0 || B < static_cast<std::int64_t>(n) * min_per_worker)
    throw input_error("round_largest_remainder: B=" + std::to_string(B) + " cannot give " +
                      std::to_string(n) + " workers at least " + std::to_string(min_per_worker));
  std::vector<std::int64_t> out(n);
  std::vector<double> frac(n);
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(values[i])) throw input_error("round_largest_remainder: non-finite value");
    const double v = std::max(double(min_per_worker), values[i]);
    out[i] = static_cast<std::int64_t>(std::floor(v));
    frac[i] = v - std::floor(v);
    sum += out[i];
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Largest fractional part first; index breaks ties so the result is deterministic.
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return frac[x] > frac[y]; });
  for (std::size_t k = 0; sum < B; k = (k + 1) % n) {
    ++out[order[k]];
    ++sum;
  }
  // Inputs that summed above B (values raised to the floor): take back from the smallest
  // fractional parts among those above the floor.
  for (std::size_t k = n; sum > B;) {
    k = (k == 0 ? n : k) - 1;
    if (out[order[k]] > min_per_worker) {
      --out[order[k]];
      --sum;
    }
  }
  return out;
}

std::vector<std::int64_t> equal_finish_split(const std::vector<linear_time>& models, std::int64_t B,
                                             std::int64_t min_per_worker) {
  if (min_per_worker < 0) throw input_error("equal_finish_split: min_per_worker must be >= 0");
  const auto real = equal_finish_real(models, double(B), double(min_per_worker));
  auto out = round_largest_remainder(real.slices, B, min_per_worker);
  fix_up(models, out, min_per_worker);
  return out;
}

double predicted_makespan(const std::vector<linear_time>& models,
                          const std::vector<std::int64_t>& slices) {
  if (models.size() != slices.size())
    throw input_error("predicted_makespan: " + std::to_string(models.size()) + " models but " +
                      std::to_string(slices.size()) + " slices");
  double worst = 0.0;
  for (std::size_t i = 0; i < models.size(); ++i)
    worst = std::max(worst, models[i].at(double(slices[i])));
  return worst;
}

double split_distance(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
  if (a.size() != b.size())
    throw input_error("split_distance: splits of different sizes (" + std::to_string(a.size()) +
                      " and " + std::to_string(b.size()) + ")");
  std::int64_t total = 0, moved = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    total += a[i];
    moved += a[i] > b[i] ? a[i] - b[i] : b[i] - a[i];
  }
  return total > 0 ? double(moved) / (2.0 * double(total)) : 0.0;
}

rebalancer::rebalancer(rebalance_options options) : options_(options) {
  if (!(options_.damping > 0.0 && options_.damping <= 1.0))
    throw input_error("rebalancer: damping must be in (0, 1]");
  if (!(options_.min_gain >= 0.0) || !(options_.min_drift >= 0.0))
    throw input_error("rebalancer: min_gain and min_drift must be >= 0");
  if (options_.min_per_worker < 0) throw input_error("rebalancer: min_per_worker must be >= 0");
}

rebalance_decision rebalancer::decide(const std::vector<linear_time>& models,
                                      const std::vector<std::int64_t>& current,
                                      std::int64_t B) const {
  const std::int64_t m = options_.min_per_worker;
  rebalance_decision d;
  const auto target = equal_finish_split(models, B, m);
  d.target_makespan = predicted_makespan(models, target);

  bool matches = current.size() == models.size();
  if (matches) {
    std::int64_t sum = 0;
    for (auto c : current) {
      sum += c;
      if (c < m) matches = false;
    }
    matches = matches && sum == B;
  }
  if (!matches) {
    d.slices = target;
    d.changed = true;
    d.predicted_makespan = d.target_makespan;
    d.reason = "reset: current split does not fit " + std::to_string(models.size()) +
               " workers, batch " + std::to_string(B);
    return d;
  }

  d.current_makespan = predicted_makespan(models, current);
  const double gain = d.current_makespan > 0.0
                          ? (d.current_makespan - d.target_makespan) / d.current_makespan
                          : 0.0;
  const double drift = split_distance(current, target);
  const bool worth = gain > options_.min_gain || (drift > options_.min_drift && gain > 0.0);
  if (!worth) {
    d.slices = current;
    d.predicted_makespan = d.current_makespan;
    d.reason = "hold: gain " + percent(gain) + " <= " + percent(options_.min_gain) + ", drift " +
               percent(drift);
    return d;
  }

  std::vector<double> damped(current.size());
  for (std::size_t i = 0; i < current.size(); ++i)
    damped[i] = double(current[i]) + options_.damping * double(target[i] - current[i]);
  auto next = round_largest_remainder(damped, B, m);
  double next_mk = predicted_makespan(models, next);
  // Rounding may swallow a small step or, rarely, make it worse: then go to the target itself.
  if (next == current || next_mk > d.current_makespan) {
    next = target;
    next_mk = d.target_makespan;
  }
  d.reason = "rebalance: gain " + percent(gain) + ", drift " + percent(drift) + ", moved " +
             percent(split_distance(current, next));
  d.slices = std::move(next);
  d.changed = true;
  d.predicted_makespan = next_mk;
  return d;
}

std::optional<std::size_t> steps_to_reconverge(
    const std::vector<std::vector<std::int64_t>>& history, const std::vector<std::int64_t>& target,
    double tolerance) {
  if (history.empty()) return std::size_t{0};
  if (split_distance(target, history.back()) > tolerance) return std::nullopt;
  std::size_t k = history.size();
  while (k > 0 && split_distance(target, history[k - 1]) <= tolerance) --k;
  return k;
}

std::optional<std::size_t> steps_to_reconverge(
    const std::vector<std::vector<std::int64_t>>& history, double tolerance) {
  if (history.empty()) return std::size_t{0};
  return steps_to_reconverge(history, history.back(), tolerance);
}

}  // namespace troupe::policies
