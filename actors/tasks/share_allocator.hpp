#pragma once
// share_allocator: the policy actor behind `cluster.shares: adaptive`. One per
// task manager when some group is `shared`. It learns from the task manager which jobs run on
// shared devices (share_member, with each job's weight = share x priority weight), takes every
// step_metrics of those jobs from the metrics hub, and every `period` asks
// policies::adaptive_shares to move the shares toward the jobs with the higher priority-weighted
// goodput (Pollux): throughput measured over the last window at the share the job had, times the
// statistical efficiency E = (B_noise + 1) / (B_noise + B) from the job's gradient noise scale
// (progress per sample relative to per-sample SGD, McCandlish et al.; E = 1 while B_noise is
// unknown), with a floor per job and damping. A change goes to the task manager as
// share_decision (which forwards it to the jobs and keeps the final shares for the report) and is
// logged on the metrics hub under the name "share_allocator".
//
// State machine (one state: it only reacts):
//
//   ALLOCATING --1,2,3--> ALLOCATING
//
//   1. share_member(active) from the task manager: the job joins with share w / sum(w) of the
//      members (the others keep their relative shares); the new shares are sent as a decision.
//      share_member(!active): the job leaves; the others are renormalised (no decision sent: the
//      gate's weights are relative, so nothing changes for them).
//   2. step_metrics from the hub: a member's window gains its samples and step time, and its
//      noise scale is refreshed. Metrics of other jobs are ignored.
//   3. (share_tick_atom) every `period`: with at least two members, each measured over at least
//      `min_steps` steps in the window, decide; then open a new window.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "actors/common/caf_compat.hpp"
#include "policies/shares.hpp"

namespace troupe::actors {

struct share_allocator_options {
  double period_seconds = 1.0;
  policies::share_options policy;
  std::int64_t min_steps = 2;  // steps per member in a window before its throughput counts
};

struct share_member_state {
  msg::job_id job = 0;
  double weight = 1.0;
  double share = 0.0;
  std::int64_t batch = 1;
  std::optional<double> b_noise;
  // The current window: samples and step seconds reported since the last decision.
  std::int64_t window_steps = 0;
  std::int64_t window_samples = 0;
  double window_seconds = 0.0;
};

// The CAF-free core: membership, windows and decisions (tests drive it directly too).
class share_book {
 public:
  explicit share_book(share_allocator_options options = {}) : options_(options) {}
  void join(const std::string& name, msg::job_id job, double weight, std::int64_t batch);
  void leave(const std::string& name);
  void observe(const msg::step_metrics& m);
  // A decision when the policy moves the shares; nullopt otherwise. Opens a new window.
  std::optional<msg::share_decision> decide();
  msg::share_decision current(const std::string& reason) const;
  const std::map<std::string, share_member_state>& members() const { return members_; }

 private:
  share_allocator_options options_;
  std::map<std::string, share_member_state> members_;
};

struct share_allocator_state {
  static inline const char* name = "share_allocator";
  share_book book;
  caf::actor task_manager;
  caf::actor metrics_hub;
  std::int64_t decisions = 0;
};

// Subscribes to the hub (when given) and ticks every options.period_seconds.
caf::behavior share_allocator(stateful<share_allocator_state>* self, caf::actor task_manager,
                              caf::actor metrics_hub, share_allocator_options options);

}  // namespace troupe::actors
