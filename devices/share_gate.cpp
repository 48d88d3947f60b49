#include "devices/share_gate.hpp"

#include <map>

#include "core/clock.hpp"
#include "core/error.hpp"

namespace troupe::devices {

std::shared_ptr<share_gate> share_gate::named(const std::string& group) {
  static std::mutex registry_mu;
  static std::map<std::string, std::weak_ptr<share_gate>> registry;
  std::lock_guard<std::mutex> lock(registry_mu);
  auto& slot = registry[group];
  auto gate = slot.lock();
  if (!gate) {
    gate = std::make_shared<share_gate>(group);
    slot = gate;
  }
  return gate;
}

void share_gate::set_weight(const std::string& job, double weight) {
  std::lock_guard<std::mutex> lock(mu_);
  sched_.set_weight(job, weight);
}

double share_gate::acquire(const std::string& job, std::chrono::milliseconds deadline) {
  stopwatch waited;
  std::unique_lock<std::mutex> lock(mu_);
  sched_.enqueue(job);
  sched_.grant();
  const bool got = cv_.wait_for(lock, deadline, [&] {
    if (!sched_.busy()) sched_.grant();
    return sched_.running() == job;
  });
  if (!got) {
    sched_.withdraw(job);
    throw runtime_failure("share gate '" + name_ + "': job '" + job + "' waited more than " +
                          std::to_string(deadline.count()) + " ms; device held by job '" +
                          sched_.running() + "'");
  }
  return waited.seconds();
}

void share_gate::release(const std::string& job, double seconds_used) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    sched_.release(job, seconds_used);
    sched_.grant();
  }
  cv_.notify_all();
}

double share_gate::used_seconds(const std::string& job) const {
  std::lock_guard<std::mutex> lock(mu_);
  return sched_.used_seconds(job);
}

}  // namespace troupe::devices
