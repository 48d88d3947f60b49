#pragma once
// Child processes a run starts and must leave behind none of: `troupe run` starts one agent per
// `process: separate` group. A child is started with posix_spawn (no shell) and stopped in
// two steps: it gets `grace` seconds to exit by itself (agents exit when the run says bye),
// then SIGKILL; it is always reaped.
#include <sys/types.h>

#include <string>
#include <vector>

namespace troupe {

struct child_options {
  // The child leads a process group of its own, so that kill_group reaches what it starts too
  // (the agents of a control process).
  bool own_group = false;
  // Its standard output and error go to this file (created or truncated); "": inherited.
  std::string output;
};

class child_process {
 public:
  // Starts `argv[0]` with `argv` and this process's environment plus `extra_env`
  // ("NAME=value"). Throws runtime_failure naming the program when it cannot be started.
  child_process(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
                const child_options& options = {});
  ~child_process();  // stop(0) unless stopped
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  pid_t pid() const { return pid_; }
  // Whether it is still running (reaps it when it has exited).
  bool running();
  // Waits up to `grace` seconds for it to exit, then kills it; returns its wait status.
  int stop(double grace);
  // Sends `sig` (one that ends it: SIGKILL) to its process group (own_group), waits until it
  // has exited and returns its wait status.
  int kill_group(int sig);
  // Its wait status once it has exited (running() returned false).
  int status() const { return status_; }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
};

}  // namespace troupe
