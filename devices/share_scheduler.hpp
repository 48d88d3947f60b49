#pragma once
// Weighted time slicing of one device among jobs (Gandiva/AntMan-style virtual shares), as a
// pure scheduling core: stride scheduling on virtual time. Each job's virtual time advances by
// (seconds used) / weight; the device goes to the waiting job with the smallest virtual time, so
// backlogged jobs receive compute time in proportion to their weights. A job that was idle
// re-enters no earlier than the global virtual time (the clock of the last job granted), so
// idling never banks credit.
//
// Anticipation (non-work-conserving, as in anticipatory disk scheduling, Iyer & Druschel 2001):
// a training job is not backlogged between its steps (it reduces and applies before asking
// again), so plain stride scheduling would hand the device to whoever happens to wait and the
// jobs would simply alternate step for step, whatever their weights. With an anticipation
// window w > 0, a job that released the device less than w ago and whose virtual time is below
// every waiter's keeps its turn: the device stays idle for it until it comes back or the window
// runs out. Times are seconds on any monotonic clock the caller passes in.
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
  // Picks the next job to run among waiters; empty when none waits or when an anticipated job
  // (see above) holds its turn until hold_until(). Marks it running.
  std::string grant(double now = 0.0);
  // How long a job that just released may keep its turn (0, the default: work-conserving).
  void set_anticipation(double seconds) { anticipation_ = seconds; }
  // When the turn held for an absent job lapses (valid after grant() returned empty with
  // waiters present); 0 when nothing is held.
  double hold_until() const { return hold_until_; }
  // A waiting job gives up (its deadline passed); no-op when it is not waiting.
  void withdraw(const std::string& job) { waiters_.erase(job); }
  // The running job finished a slice that took `seconds`; charges it.
  void release(const std::string& job, double seconds, double now = 0.0);

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
    double released_at = -1e300;
  };

  std::map<std::string, account> accounts_;
  std::set<std::string> waiters_;
  std::string running_;
  double global_vtime_ = 0.0;
  double anticipation_ = 0.0;
  double hold_until_ = 0.0;
};

}  // namespace troupe::devices
