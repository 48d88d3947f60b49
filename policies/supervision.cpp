#include "policies/supervision.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <vector>

#include "core/error.hpp"

namespace troupe::policies {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw input_error(what);
}
bool finite(double v) {
  return std::isfinite(v);
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

bool contains_any(const std::string& hay, std::initializer_list<const char*> needles) {
  for (const char* n : needles)
    if (hay.find(n) != std::string::npos) return true;
  return false;
}

}  // namespace

failure_policy default_policy(failure_class c) {
  switch (c) {
    case failure_class::crash:
    case failure_class::hang:
      return failure_policy::restart;
    case failure_class::device_error:
    case failure_class::out_of_memory:
    case failure_class::lost_group:
      return failure_policy::migrate;
  }
  return failure_policy::fail_job;
}

failure_class classify_message(std::string_view what) {
  const std::string s = lower(what);
  // Memory first: a CUDA out-of-memory message also says "cuda".
  if (contains_any(s, {"out of memory", "out-of-memory", "bad_alloc", "cannot allocate memory",
                       "alloc_failed", "memoryallocation"}))
    return failure_class::out_of_memory;
  if (contains_any(s, {"cuda", "nccl", "cublas", "device"})) return failure_class::device_error;
  return failure_class::crash;
}

policy_table::policy_table() {
  for (auto c : all_values<failure_class>()) set(c, default_policy(c));
}

policy_table::policy_table(const std::map<failure_class, failure_policy>& overrides)
    : policy_table() {
  for (const auto& [c, p] : overrides) set(c, p);
}

void validate(const restart_limits& l) {
  require(l.max_restarts >= 0,
          "restart intensity: max_restarts must be >= 0, got " + std::to_string(l.max_restarts));
  require(finite(l.window_seconds) && l.window_seconds > 0,
          "restart intensity: window_seconds must be > 0, got " + std::to_string(l.window_seconds));
}

void validate(const backoff_params& b) {
  require(finite(b.base_seconds) && b.base_seconds >= 0, "backoff: base_seconds must be >= 0");
  require(finite(b.factor) && b.factor >= 1, "backoff: factor must be >= 1");
  require(finite(b.cap_seconds) && b.cap_seconds >= b.base_seconds,
          "backoff: cap_seconds must be >= base_seconds");
  require(finite(b.jitter) && b.jitter >= 0 && b.jitter <= 1, "backoff: jitter must be in [0, 1]");
}

double backoff_seconds(int attempt, const backoff_params& b, rng& r) {
  validate(b);
  // factor^attempt overflows to inf for large attempts; min() with the cap handles that.
  const double raw = b.base_seconds * std::pow(b.factor, std::max(attempt, 0));
  const double d = std::min(b.cap_seconds, raw);
  return d * (1.0 - b.jitter * r.uniform());
}

restart_intensity::restart_intensity(restart_limits limits) : limits_(limits) {
  validate(limits_);
}

int restart_intensity::restarts_in_window(double now) const {
  return static_cast<int>(std::count_if(
      times_.begin(), times_.end(), [&](double t) { return t > now - limits_.window_seconds; }));
}

restart_decision restart_intensity::on_failure(double now) {
  while (!times_.empty() && times_.front() <= now - limits_.window_seconds) times_.pop_front();
  if (static_cast<int>(times_.size()) >= limits_.max_restarts) return restart_decision::escalate;
  times_.push_back(now);
  return restart_decision::restart;
}

supervisor_decision decide(failure_class c, const policy_table& table, restart_intensity& intensity,
                           double now, const backoff_params& backoff, rng& r, int backoff_attempt) {
  supervisor_decision d;
  const std::string cls = name_of(c);
  switch (table[c]) {
    case failure_policy::fail_job:
      d.action = supervisor_action::fail_job;
      d.reason = cls + ": policy fail-job";
      return d;
    case failure_policy::migrate:
      d.action = supervisor_action::migrate;
      d.reason = cls + ": policy migrate";
      return d;
    case failure_policy::restart:
      break;
  }
  const int before = intensity.restarts_in_window(now);
  const auto& lim = intensity.limits();
  if (intensity.on_failure(now) == restart_decision::escalate) {
    d.action = supervisor_action::migrate;
    d.escalated = true;
    d.reason = cls + ": " + std::to_string(before) + " restarts in the last " +
               std::to_string(static_cast<long long>(lim.window_seconds)) +
               " s reached the limit " + std::to_string(lim.max_restarts) +
               "; escalating to migrate";
    return d;
  }
  d.action = supervisor_action::restart;
  d.backoff_seconds = backoff_seconds(backoff_attempt >= 0 ? backoff_attempt : before, backoff, r);
  d.reason = cls + ": restart " + std::to_string(before + 1) + " of " +
             std::to_string(lim.max_restarts) + " in the window";
  return d;
}

void validate(const deadline_params& d) {
  require(finite(d.floor_seconds) && d.floor_seconds >= 0, "hang deadline: floor must be >= 0");
  require(finite(d.multiple) && d.multiple >= 1, "hang deadline: multiple must be >= 1");
  require(finite(d.percentile) && d.percentile > 0 && d.percentile <= 1,
          "hang deadline: percentile must be in (0, 1]");
  require(d.window >= 1, "hang deadline: window must be >= 1");
  require(d.min_samples >= 1 && d.min_samples <= d.window,
          "hang deadline: min_samples must be in [1, window]");
  require(finite(d.initial_seconds) && d.initial_seconds >= 0,
          "hang deadline: initial_seconds must be >= 0");
}

step_deadline::step_deadline(deadline_params params) : params_(params) {
  validate(params_);
}

void step_deadline::observe(double step_seconds) {
  if (!finite(step_seconds) || step_seconds < 0) return;
  times_.push_back(step_seconds);
  while (times_.size() > params_.window) times_.pop_front();
}

double step_deadline::high_percentile() const {
  if (times_.empty()) return 0.0;
  std::vector<double> v(times_.begin(), times_.end());
  // Nearest rank; the small epsilon keeps p * n = 19.000000000000004 from becoming rank 20.
  const double rank = std::ceil(params_.percentile * static_cast<double>(v.size()) - 1e-9);
  const auto k = static_cast<std::size_t>(std::clamp(rank, 1.0, static_cast<double>(v.size()))) - 1;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

double step_deadline::deadline() const {
  if (times_.size() < params_.min_samples)
    return std::max(params_.floor_seconds, params_.initial_seconds);
  return std::max(params_.floor_seconds, params_.multiple * high_percentile());
}

}  // namespace troupe::policies
