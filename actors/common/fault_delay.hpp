#pragma once
// The `delay` fault (`delay:GROUP/INDEX+MS@STEP|WINDOW`): a slow link. It holds back
// what the worker sends over the data plane at the faulted steps: in `sync: ps` its gradient
// push (step_done), in `sync: allreduce` its contribution to the step's reduction, in
// `sync: local` its contribution to an averaging round only (a local step sends nothing, so it is
// not delayed). The worker holds the message back with a CAF timer (delayed_send), never a
// blocking sleep: the actor stays responsive, and the job's step deadline still bounds the step.
#include <cstdint>
#include <vector>

#include "core/config.hpp"

namespace troupe::actors {

// Seconds of delay at `step` from the `delay` entries of one device (summed when windows
// overlap). until_step -1 means to the end of the run.
inline double delay_seconds(const std::vector<config::fault_config>& delays, std::int64_t step) {
  double s = 0.0;
  for (const auto& f : delays)
    if (f.action == fault_action::delay && step >= f.step &&
        (f.until_step < 0 || step <= f.until_step))
      s += f.seconds;
  return s;
}

// For the report's faults.injected: `delay` entries whose window began within `steps` steps.
inline std::int64_t started_delays(const std::vector<config::fault_config>& faults,
                                   std::int64_t steps) {
  std::int64_t n = 0;
  for (const auto& f : faults)
    if (f.action == fault_action::delay && f.step < steps) ++n;
  return n;
}

}  // namespace troupe::actors
