#pragma once
// Thread-safe gate in front of one shared device: a caller acquires the device for its job,
// computes, and releases with the time it used; share_scheduler decides who goes next.
// Gates are found by name, so every sim device configured with the same share_group shares one.
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "devices/share_scheduler.hpp"

namespace troupe::devices {

class share_gate {
 public:
  // Anticipation window (share_scheduler.hpp): long enough to cover a training job's gap between
  // two steps on a loaded host, short enough that a job that stopped costs the device little.
  static constexpr double default_anticipation_seconds = 0.02;

  explicit share_gate(std::string name = "",
                      double anticipation_seconds = default_anticipation_seconds);

  // The process-wide gate for a share group (created on first use).
  static std::shared_ptr<share_gate> named(const std::string& group);

  void set_weight(const std::string& job, double weight);
  // Blocks until `job` holds the device; returns the seconds spent waiting. Throws
  // runtime_failure naming the gate and the holder when the deadline passes first.
  double acquire(const std::string& job,
                 std::chrono::milliseconds deadline = std::chrono::minutes(5));
  void release(const std::string& job, double seconds_used);
  double used_seconds(const std::string& job) const;
  double weight(const std::string& job) const;

 private:
  std::string name_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  share_scheduler sched_;
  double now() const;
};

}  // namespace troupe::devices
