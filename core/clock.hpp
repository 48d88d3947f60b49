#pragma once
// Wall-clock helpers for measurements. Actors use CAF's clock (simulated in tests) instead.
#include <chrono>

namespace troupe {

using steady = std::chrono::steady_clock;

inline double seconds_since(steady::time_point t0) {
  return std::chrono::duration<double>(steady::now() - t0).count();
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
