#pragma once
// What every backend reports as its compute time: the wall time of the call's computation alone,
// not of the preparation before it.
#include "core/clock.hpp"
#include "devices/device.hpp"

namespace troupe::devices {

// f()'s stats, with the time f took in timing->compute_seconds (when the caller asked for it).
template <class F>
models::step_stats timed_compute(step_timing* timing, F&& f) {
  const stopwatch sw;
  auto stats = f();
  if (timing) timing->compute_seconds = sw.seconds();
  return stats;
}

}  // namespace troupe::devices
