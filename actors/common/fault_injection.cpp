#include "actors/common/fault_injection.hpp"

#include <algorithm>
#include <chrono>

namespace troupe::actors {

void cancel_token::cancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
  }
  cv_.notify_all();
}

bool cancel_token::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

bool cancel_token::wait_for(double seconds) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return cancelled_; });
}

fault_plan::fault_plan(std::vector<config::fault_config> faults)
    : faults_(std::move(faults)), fired_(faults_.size(), false), partitioned_(faults_.size()) {}

std::optional<config::fault_config> fault_plan::fire(const std::string& name,
                                                     const std::string& group, std::int64_t step,
                                                     fault_phase phase) {
  std::lock_guard<std::mutex> lock(mu_);
  for (std::size_t i = 0; i < faults_.size(); ++i) {
    const auto& f = faults_[i];
    // At S, or at the first step after S that this worker computes (it was out at S).
    if (fired_[i] || f.step > step || f.phase != phase) continue;
    const bool one_shot = f.action != fault_action::slow && f.action != fault_action::delay &&
                          f.action != fault_action::partition;
    if (one_shot && f.target == name) {
      fired_[i] = true;
      fired_at_[name] = steady::now();
      return f;
    }
    // A partition cuts off every worker of the group, each once.
    if (f.action == fault_action::partition && f.target == group) {
      auto& who = partitioned_[i];
      if (std::find(who.begin(), who.end(), name) != who.end()) continue;
      who.push_back(name);
      fired_at_[name] = steady::now();
      return f;
    }
  }
  return std::nullopt;
}

void fault_plan::add(const config::fault_config& f) {
  std::lock_guard<std::mutex> lock(mu_);
  faults_.push_back(f);
  fired_.push_back(false);
  partitioned_.emplace_back();
}

std::optional<steady::time_point> fault_plan::take_fired_at(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = fired_at_.find(name);
  if (it == fired_at_.end()) return std::nullopt;
  const auto t = it->second;
  fired_at_.erase(it);
  return t;
}

std::int64_t fault_plan::injected(std::int64_t steps_done) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::int64_t n = 0;
  for (std::size_t i = 0; i < faults_.size(); ++i) {
    const auto& f = faults_[i];
    if (fired_[i] || !partitioned_[i].empty() ||
        (f.action == fault_action::slow && f.step < steps_done))
      ++n;
  }
  return n;
}

}  // namespace troupe::actors
