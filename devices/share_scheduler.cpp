#include "devices/share_scheduler.hpp"

#include <limits>

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

double share_scheduler::min_active_vtime() const {
  double m = std::numeric_limits<double>::infinity();
  for (const auto& w : waiters_) m = std::min(m, accounts_.at(w).vtime);
  if (!running_.empty()) m = std::min(m, accounts_.at(running_).vtime);
  return m;
}

void share_scheduler::enqueue(const std::string& job) {
  auto& acc = accounts_[job];
  // Re-entering after idling: catch up to the active jobs so that idle time is not banked.
  const double floor = min_active_vtime();
  if (floor != std::numeric_limits<double>::infinity() && acc.vtime < floor) acc.vtime = floor;
  waiters_.insert(job);
}

std::string share_scheduler::grant() {
  if (!running_.empty() || waiters_.empty()) return {};
  const std::string* best = nullptr;
  for (const auto& w : waiters_) {
    // Ties go to the smaller name, so the order is deterministic.
    if (!best || accounts_.at(w).vtime < accounts_.at(*best).vtime) best = &w;
  }
  running_ = *best;
  waiters_.erase(running_);
  return running_;
}

void share_scheduler::release(const std::string& job, double seconds) {
  auto& acc = accounts_[job];
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
