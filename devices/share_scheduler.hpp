#pragma once
// Weighted time slicing of one device among jobs (Gandiva/AntMan-style virtual shares), as a
// pure scheduling core: stride scheduling on virtual time. Each job's virtual time advances by
// (seconds used) / weight; the device goes to the waiting job with the smallest virtual time, so
// backlogged jobs receive compute time in proportion to their weights. A job that was idle
// re-enters no earlier than the global virtual time (the clock of the last job granted), so
// idling never banks credit.
//
// Not thread-safe; share_gate wraps it for threads.
#include <map>
#include <set>
#include <string>

namespace troupe::devices {

class share_scheduler {
 public:
  // Sets (or changes) a job's weight. Weight must be > 0.
  void set_weight(const std::string& job, double weight);
  double weight(const std::string& job) const;

  // A job asks for the device; it runs once grant() picks it.
  void enqueue(const std::string& job);
  // Picks the next job to run among waiters; empty when none waits. Marks it running.
  std::string grant();
  // A waiting job gives up (its deadline passed); no-op when it is not waiting.
  void withdraw(const std::string& job) { waiters_.erase(job); }
  // The running job finished a slice that took `seconds`; charges it.
  void release(const std::string& job, double seconds);

  bool busy() const { return !running_.empty(); }
  const std::string& running() const { return running_; }
  bool waiting(const std::string& job) const { return waiters_.count(job) > 0; }
  double virtual_time(const std::string& job) const;
  double used_seconds(const std::string& job) const;

 private:
  struct account {
    double weight = 1.0;
    double vtime = 0.0;
    double used = 0.0;
  };

  std::map<std::string, account> accounts_;
  std::set<std::string> waiters_;
  std::string running_;
  double global_vtime_ = 0.0;
};

}  // namespace troupe::devices
