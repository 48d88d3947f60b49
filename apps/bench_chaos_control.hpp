#pragma once
// `troupe bench chaos CONFIG --kinds control`: the control process itself as the target. The job
// runs as a child `troupe run` with checkpoints; at random times (--rate a minute, for
// --seconds) the bench kills it and everything it started (SIGKILL to its process group) and
// starts it again with --resume, until a run completes. Against a fault-free child run of the
// same config: goodput, the steps trained again (between a kill and the checkpoint it resumed
// from), the sample ledger's verdict over every run (checkpoints carry it), and whether the
// final parameters are the fault-free run's bits.
#include <cstdint>
#include <string>
#include <vector>

namespace troupe::apps {

// The flags of `troupe bench chaos`, whatever the target.
struct chaos_options {
  std::string config;
  std::vector<std::string> sets;  // --set, as for `troupe run`
  double rate = 30;               // faults a minute
  std::vector<std::string> kinds;
  double seconds = 60;  // faults land only this long into the chaotic run
  long long runs = 1;
  std::uint64_t seed = 1;
  std::string log_dir;  // where the runs' logs go ("": a scratch directory, or none)
  // --kinds control: the checkpoint interval unless --set gives jobs.0.checkpoint.every_steps.
  std::int64_t every_steps = 25;
};

// --kinds control. Prints the table and the medians; returns the exit code. Throws
// troupe::runtime_failure when a run fails on its own (not killed) or does not end within an hour.
int run_control_chaos(const chaos_options& o);

}  // namespace troupe::apps
