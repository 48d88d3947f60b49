#pragma once
// `troupe agent`: a process that offers one resource group to a control process (`troupe run
// --listen`). Each join attempt first asks the join endpoint (actors/agents/agent_enroll.hpp) for a
// certificate and a one-time ticket, then connects to the control port with mutual TLS through
// CAF's middleman with a deadline (a plain remote_actor can block forever in CAF 0.17), says
// agent_hello with the ticket, and then stays joined until the
// control process says the run is over (exit 0) or goes away (it rejoins, with backoff, as a new
// member). A refusal (another version, a name or group already taken) ends it with exit 2:
// trying again cannot help.
//
// While joined it computes for the run's workers of its group: each host_worker builds a device
// and a model here and serves that worker's steps over a data-plane link
// (actors/agents/worker_host.hpp).
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/kinds.hpp"

namespace troupe::actors {

// What an agent has done so far, for its `/metrics` (troupe agent --metrics): written by the
// agent and its serving threads, read by whoever asks.
struct agent_status {
  std::atomic<bool> joined{false};
  std::atomic<std::int64_t> joins{0};           // accepted joins (a rejoin counts again)
  std::atomic<std::int64_t> losses{0};          // control processes lost
  std::atomic<std::int64_t> workers_hosted{0};  // workers it built a device and model for
  std::atomic<int> serving{0};                  // of them, serving now
  std::atomic<std::int64_t> calls{0};           // compute calls served
};

struct agent_options {
  std::string host = "127.0.0.1";  // the control process
  std::uint16_t port = 0;
  std::string name;   // this agent's id
  std::string group;  // the resource group it offers
  device_kind device = device_kind::cpu;
  int count = 1;
  int threads = 1;
  std::string token;  // the cluster's join token
  // Asked again at each join attempt when set (the token in a state directory, which
  // `troupe token --rotate` may have changed since the agent started); else `token`.
  std::function<std::string()> token_source;
  std::string ca_path;    // the cluster CA's certificate, which the control process must show
  bool insecure = false;  // no TLS, no token (the control process runs with --insecure)
  // The interface tcp data links bind on ("": the one that routes to the control process).
  std::string data_host;
  // Exit when this process (the agent's parent) exits: `troupe run` sets it for the agents it
  // starts, so a control process killed with SIGKILL leaves none behind. 0: not tied.
  std::int64_t parent = 0;
  // Give up when no join succeeded for this long (at start, or after losing the control
  // process); each connect or hello waits at most attempt_seconds.
  double join_timeout_seconds = 60.0;
  double attempt_seconds = 2.0;
  double backoff_seconds = 0.1;  // doubled after each failed attempt, at most 2 s
  // Set (from a signal's watcher) to leave: the agent stops serving, leaves the run and returns
  // 0 within about 100 ms. Null: it only ends with the run.
  std::shared_ptr<const std::atomic<bool>> stop;
  // Kept up to date while it runs, when given.
  std::shared_ptr<agent_status> status;
};

// Runs the agent until the control process ends the run (returns 0), `stop` is set (returns 0;
// the run sees the agent lost and its supervision moves the work), the control process refuses
// the agent (returns 2) or cannot be reached within join_timeout_seconds (returns 1). `log` gets
// one line per event.
int run_agent(const agent_options& options, const std::function<void(const std::string&)>& log);

}  // namespace troupe::actors
