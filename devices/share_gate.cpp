#include "devices/share_gate.hpp"

#include <map>

#include "core/clock.hpp"
#include "core/error.hpp"

namespace troupe::devices {

share_gate::share_gate(std::string name, double anticipation_seconds) : name_(std::move(name)) {
  sched_.set_anticipation(anticipation_seconds);
}

double share_gate::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

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
  const auto give_up = std::chrono::steady_clock::now() + deadline;
  std::unique_lock<std::mutex> lock(mu_);
  sched_.enqueue(job);
  bool got = false;
  for (;;) {
    if (!sched_.busy() && !sched_.grant(now()).empty() && sched_.running() != job)
      cv_.notify_all();  // the turn went to another waiter
    if (sched_.running() == job) {
      got = true;
      break;
    }
    const auto t = std::chrono::steady_clock::now();
    if (t >= give_up) break;
    auto wake = give_up;
    if (!sched_.busy() && sched_.hold_until() > 0.0) {
      // Nobody may run until an anticipated job returns or its window lapses: wake for that.
      const auto lapse = t + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                 std::chrono::duration<double>(sched_.hold_until() - now()));
      wake = std::min(wake, lapse + std::chrono::microseconds(50));
    }
    cv_.wait_until(lock, wake);
  }
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
    sched_.release(job, seconds_used, now());
    sched_.grant(now());
  }
  cv_.notify_all();
}

double share_gate::weight(const std::string& job) const {
  std::lock_guard<std::mutex> lock(mu_);
  return sched_.weight(job);
}

double share_gate::used_seconds(const std::string& job) const {
  std::lock_guard<std::mutex> lock(mu_);
  return sched_.used_seconds(job);
}

}  // namespace troupe::devices
