#include "devices/share_scheduler.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace troupe::devices {

void share_scheduler::set_weight(const std::string& job, double weight) {
  if (!(weight > 0.0)) throw input_error("share weight of job '" + job + "' must be > 0");
  accounts_[job].weight = weight;
}

double share_scheduler::weight(const std::string& job) const {
  auto it = accounts_.find(job);
  return it == accounts_.end() ? 1.0 : it->second.weight;
}

void share_scheduler::enqueue(const std::string& job) {
  auto& acc = accounts_[job];
  // Re-entering after idling: catch up to the global virtual time so that idle time is not
  // banked. A backlogged job re-entering right after its slice is never behind it (it was the
  // minimum when granted), so this never takes from a job that kept its share.
  if (acc.vtime < global_vtime_) acc.vtime = global_vtime_;
  waiters_.insert(job);
}

std::string share_scheduler::grant(double now) {
  hold_until_ = 0.0;
  if (!running_.empty() || waiters_.empty()) return {};
  const std::string* best = nullptr;
  for (const auto& w : waiters_) {
    // Ties go to the smaller name, so the order is deterministic.
    if (!best || accounts_.at(w).vtime < accounts_.at(*best).vtime) best = &w;
  }
  if (anticipation_ > 0.0) {
    const double best_vtime = accounts_.at(*best).vtime;
    for (const auto& [job, acc] : accounts_) {
      if (waiters_.count(job) || acc.vtime >= best_vtime) continue;
      const double until = acc.released_at + anticipation_;
      if (until > now) hold_until_ = std::max(hold_until_, until);
    }
    if (hold_until_ > 0.0) return {};
  }
  running_ = *best;
  waiters_.erase(running_);
  global_vtime_ = std::max(global_vtime_, accounts_.at(running_).vtime);
  return running_;
}

void share_scheduler::release(const std::string& job, double seconds, double now) {
  auto& acc = accounts_[job];
  acc.released_at = now;
  acc.vtime += seconds / acc.weight;
  acc.used += seconds;
  if (running_ == job) running_.clear();
}

double share_scheduler::virtual_time(const std::string& job) const {
  auto it = accounts_.find(job);
  return it == accounts_.end() ? 0.0 : it->second.vtime;
}

double share_scheduler::used_seconds(const std::string& job) const {
  auto it = accounts_.find(job);
  return it == accounts_.end() ? 0.0 : it->second.used;
}

}  // namespace troupe::devices
