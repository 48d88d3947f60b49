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

struct control_chaos_options {
  std::string config;
  std::vector<std::string> sets;  // --set, as for `troupe run`
  double rate = 30;               // kills a minute
  double seconds = 60;            // kills land only this long into the chaotic run
  long long runs = 1;
  std::uint64_t seed = 1;
  std::int64_t every_steps = 25;  // checkpoint interval unless the config sets one
  std::string log_dir;            // where the runs' logs go ("": a scratch directory)
};

// Prints the table and the medians; returns the exit code. Throws troupe::runtime_failure when
// a run fails on its own (not killed) or does not end within an hour.
int run_control_chaos(const control_chaos_options& o);

}  // namespace troupe::apps
