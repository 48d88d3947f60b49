#pragma once
// The worker side of fault injection (grammar in core/fault_spec.hpp). Plain C++, no
// CAF: a device_worker asks its job's fault_plan, at the start of each step's compute (and, for a
// kill with a phase, when the step's reduction reaches it and before it applies the result),
// whether a fault fires on it, and a hung worker waits on its incarnation's cancel_token.
//
// - A fault fires at most ONCE per job: the plan is shared by every worker of the job and by the
//   incarnations a supervisor restarts, so a restarted worker does not die again of the same
//   fault when it recomputes or re-enters at the same step.
// - hang: CAF cannot interrupt a detached actor's blocked thread, so a hang is a wait on the
//   incarnation's token with a deadline. When the job declares the worker hung, the supervisor
//   cancels the token: the thread wakes, sees it is released, and quits without computing.
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "core/config.hpp"

namespace troupe::actors {

// One per worker incarnation.
class cancel_token {
 public:
  void cancel();
  bool cancelled() const;
  // Waits up to `seconds`; true when cancelled (at once if it already was).
  bool wait_for(double seconds);

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool cancelled_ = false;
};

// One per job: its scripted and soak faults, with which of them fired.
class fault_plan {
 public:
  explicit fault_plan(std::vector<config::fault_config> faults = {});

  // The one-shot fault (kill, hang, drop, oom, device-error, partition) that fires on worker `name`
  // (GROUP/INDEX) of `group` at `step` in `phase` of its step, if any; marks it fired. partition
  // targets the group. Only a kill has a phase other than compute.
  std::optional<config::fault_config> fire(const std::string& name, const std::string& group,
                                           std::int64_t step,
                                           fault_phase phase = fault_phase::compute);
  // Faults that fired so far, plus `slow` faults whose window began before `steps_done` (`delay`
  // faults are counted by the sync code that applies them, actors/common/fault_delay.hpp).
  std::int64_t injected(std::int64_t steps_done) const;
  // When the last fault that fired on worker `name` fired, once: the job claims it when it
  // detects that worker's failure (the report's detect_ms). Nothing when none is unclaimed.
  std::optional<steady::time_point> take_fired_at(const std::string& name);
  // A fault injected into the running job (`troupe inject`): from now on it may fire like the
  // scripted ones. Called on the job's thread, the only one that reads faults().
  void add(const config::fault_config& f);
  const std::vector<config::fault_config>& faults() const { return faults_; }

 private:
  mutable std::mutex mu_;
  std::vector<config::fault_config> faults_;
  std::vector<bool> fired_;
  std::vector<std::vector<std::string>> partitioned_;   // partition: the workers it cut off
  std::map<std::string, steady::time_point> fired_at_;  // by worker, until claimed
};

}  // namespace troupe::actors
