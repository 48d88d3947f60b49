#pragma once
// SIGTERM and SIGINT for a command that stops gracefully (what Slurm's preemption, Kubernetes'
// eviction, systemd and Ctrl-C send). A handler (any thread may take the signal: OpenBLAS
// starts its own before main) writes the signal to a pipe, and a watcher thread reads it: the
// first calls `on_first(signal)`; a second ends the process at once with exit 128 + signal, as
// the shell reports a process killed by it. The destructor restores the previous handlers.
// One at a time per process.
#include <signal.h>

#include <atomic>
#include <functional>
#include <thread>

namespace troupe::apps {

class stop_signals {
 public:
  explicit stop_signals(std::function<void(int)> on_first);
  ~stop_signals();
  stop_signals(const stop_signals&) = delete;
  stop_signals& operator=(const stop_signals&) = delete;

  // The first signal taken, 0 when none.
  int received() const { return first_.load(); }

 private:
  std::function<void(int)> on_first_;
  struct sigaction old_term_ {
  }, old_int_{};
  std::atomic<int> first_{0};
  std::thread watcher_;
};

}  // namespace troupe::apps
