#pragma once
// Wall-clock helpers for measurements. Actors use CAF's clock (simulated in tests) instead.
#include <chrono>
#include <cstdint>

namespace troupe {

using steady = std::chrono::steady_clock;

inline double seconds_since(steady::time_point t0) {
  return std::chrono::duration<double>(steady::now() - t0).count();
}

// Steady-clock nanoseconds since the clock's epoch: a time stamp that travels in a message and
// compares across the processes of one host (CLOCK_MONOTONIC), unlike a time_point.
inline std::int64_t steady_ns(steady::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}
inline std::int64_t steady_ns_now() {
  return steady_ns(steady::now());
}

class stopwatch {
 public:
  stopwatch() : t0_(steady::now()) {}
  // Started `already_seconds` ago.
  explicit stopwatch(double already_seconds)
      : t0_(steady::now() - std::chrono::duration_cast<steady::duration>(
                                std::chrono::duration<double>(already_seconds))) {}
  void reset() { t0_ = steady::now(); }
  double seconds() const { return seconds_since(t0_); }

 private:
  steady::time_point t0_;
};

}  // namespace troupe
