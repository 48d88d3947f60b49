#pragma once
// Supervision decisions: what to do when a worker fails, how long to wait
// before restarting it, and when a silent worker counts as hung. Pure: the caller passes the
// time (seconds on any monotonic clock) and the random stream; nothing here reads a clock.
//
// Failure classes and their default policies (a job's `supervision:` map overrides any of them):
//
//   class          default   why
//   crash          restart   the process/thread died; the device is presumably fine
//   hang           restart   a stuck worker is killed and replaced; often transient (a lock, a
//                            driver stall), and the restart intensity escalates if it recurs
//   device-error   migrate   the device itself reported an error; restarting on it would fail
//                            again, so its share goes to the other devices
//   out-of-memory  migrate   the same slice on the same device would run out of memory again
//   lost-group     migrate   the whole group (host) is unreachable: nothing to restart it on
//
// Restart intensity (Erlang/OTP supervisors' MaxR in MaxT): at most R restarts within any
// sliding window of T seconds; the failure that would be restart R+1 escalates instead (the job
// migrates the worker's share). One restart_intensity per worker, not per group: a flaky device
// must not use up the restart budget of its healthy neighbours.
//
// Backoff before restart k (k = restarts already in the window, so a quiet period resets it):
//   d_k = min(cap, base * factor^k) * (1 - jitter * u),  u ~ U[0, 1) from the caller's rng.
// The jitter only shortens the wait, so the cap bounds recovery time; it spreads restarts of
// workers that failed together (a shared cause) so they do not all retry at the same instant.
//
// Hang deadline: a step that takes longer than
//   deadline = max(floor, multiple * p-th percentile of the last N step times)
// means its worker is hung. The percentile is nearest-rank: the ceil(p * n)-th smallest of the n
// samples. A high percentile rather than the mean keeps occasional slow steps (GC, page faults,
// a busy neighbour) from being called hangs; the floor protects very fast steps, whose relative
// jitter is large. Before `min_samples` steps were measured (start-up: allocation, first-touch,
// caches) the deadline is max(floor, initial).
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/kinds.hpp"
#include "core/rng.hpp"

namespace troupe::policies {

// failure_class and failure_policy, with their config spellings, are in core/kinds.hpp.
using troupe::failure_class;
using troupe::failure_policy;

failure_policy default_policy(failure_class c);

// A failure from an error text (an exception's what(), a worker_down reason), case-insensitive:
// "out of memory", "out-of-memory", "bad_alloc", "cannot allocate memory" (ENOMEM),
// "alloc_failed" (cuBLAS), "memoryallocation" (cudaErrorMemoryAllocation) -> out_of_memory;
// then "cuda", "nccl", "cublas", "device" -> device_error; anything else -> crash. Hangs and lost
// groups are found by deadlines and heartbeats, never from a message.
failure_class classify_message(std::string_view what);

// Class -> policy, defaults filled in.
class policy_table {
 public:
  policy_table();
  // The defaults with config::job_config::supervision's overrides.
  explicit policy_table(const std::map<failure_class, failure_policy>& overrides);
  failure_policy operator[](failure_class c) const { return p_[static_cast<std::size_t>(c)]; }
  void set(failure_class c, failure_policy p) { p_[static_cast<std::size_t>(c)] = p; }

 private:
  std::array<failure_policy, 5> p_;
};

struct restart_limits {
  int max_restarts = 3;        // R; 0 means never restart (always escalate)
  double window_seconds = 60;  // T
};

struct backoff_params {
  double base_seconds = 0.05;  // short: a killed worker should be back well within 500 ms
  double factor = 2.0;
  double cap_seconds = 5.0;
  double jitter = 0.2;  // fraction in [0, 1]
};

// Throws troupe::input_error on R < 0, T <= 0, base < 0, factor < 1, cap < base, jitter outside
// [0, 1], or a non-finite value.
void validate(const restart_limits& l);
void validate(const backoff_params& b);

// d_k above. `attempt` = restarts already in the window (0 for the first).
double backoff_seconds(int attempt, const backoff_params& b, rng& r);

enum class restart_decision { restart, escalate };

class restart_intensity {
 public:
  explicit restart_intensity(restart_limits limits = {});
  // A failure at `now` (non-decreasing across calls). Restart, and record it, when fewer than R
  // restarts fall in (now - T, now]; otherwise escalate (not recorded).
  restart_decision on_failure(double now);
  // Restarts recorded in (now - T, now].
  int restarts_in_window(double now) const;
  const restart_limits& limits() const { return limits_; }

 private:
  restart_limits limits_;
  std::deque<double> times_;  // restarts still in the window, oldest first
};

// What the supervisor does: a class's policy, or migrate where the restart intensity escalates.
using supervisor_action = failure_policy;

struct supervisor_decision {
  supervisor_action action = supervisor_action::restart;
  double backoff_seconds = 0.0;  // restart only: wait this long first
  bool escalated = false;        // the class said restart, the intensity said no
  std::string reason;            // one line for the job log
};

// The group supervisor's whole decision for one failure of one worker at `now`. The backoff's
// attempt is `backoff_attempt` where it is >= 0 (the supervisor's count of failures in a row
// with no work done between them), else the restarts in the window.
supervisor_decision decide(failure_class c, const policy_table& table, restart_intensity& intensity,
                           double now, const backoff_params& backoff, rng& r,
                           int backoff_attempt = -1);

struct deadline_params {
  double floor_seconds = 0.5;
  double multiple = 4.0;
  double percentile = 0.95;  // in (0, 1]
  std::size_t window = 50;   // N: the last N step times
  std::size_t min_samples = 5;
  double initial_seconds = 30.0;  // before min_samples steps were measured
};

// Throws troupe::input_error on floor < 0, multiple < 1, percentile outside (0, 1], window 0,
// min_samples 0 or > window, initial < 0, or a non-finite value.
void validate(const deadline_params& d);

class step_deadline {
 public:
  explicit step_deadline(deadline_params params = {});
  // A completed step's duration. Non-finite or negative values are ignored (a clock glitch must
  // not shrink the deadline). Do not feed steps that contained a recovery: they are not typical.
  void observe(double step_seconds);
  double deadline() const;
  // The current nearest-rank percentile of the window (0 when empty).
  double high_percentile() const;
  std::size_t samples() const { return times_.size(); }
  const deadline_params& params() const { return params_; }

 private:
  deadline_params params_;
  std::deque<double> times_;
};

}  // namespace troupe::policies
