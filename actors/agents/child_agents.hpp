#pragma once
// `process: separate` groups: `troupe run` starts one `troupe agent` child per such group on
// this host, joined to the run's listener (on loopback unless --listen names an address), so
// the cross-process path is one command away. A child that dies while the run goes on (killed,
// crashed) is started again, at most `max_respawns` times per group in a minute, so the group's
// workers find an agent when their supervisor restarts them. The children exit when the run says
// bye; whatever is left is killed and reaped when this object goes.
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/child_process.hpp"
#include "core/clock.hpp"
#include "core/config.hpp"

namespace troupe::actors {

// The groups of `cluster` whose workers compute in an agent (process: separate or agent).
std::vector<config::group_config> agent_groups(const config::cluster_config& cluster);
// How many agents a run waits for before any job starts: one per separate group, and one per
// agent group that a job which is not elastic uses (an elastic job starts with min_devices and
// takes in the others as they join).
int agents_to_wait_for(const config::run_config& run);

class child_agents {
 public:
  static constexpr int max_respawns = 5;

  // Starts `program agent --join HOST:PORT --group G --name G ... --parent PID` for each
  // separate group of `cluster`; `host` is where the run listens (a listener bound to one
  // address takes no connection on loopback). Secrets go through the environment `env` gives
  // at each start (TROUPE_TOKEN=..., TROUPE_CA=...: a respawn gets a rotated token), never the
  // command line; `insecure` adds --insecure. `log` gets a line per respawn.
  child_agents(const std::string& program, const config::cluster_config& cluster,
               const std::string& host, std::uint16_t port,
               std::function<std::vector<std::string>()> env, bool insecure,
               std::function<void(const std::string&)> log);
  ~child_agents();  // stop(5)
  child_agents(const child_agents&) = delete;
  child_agents& operator=(const child_agents&) = delete;

  // The run is over: no more respawns (the children are about to exit on the bye).
  void stop_respawning();
  // stop_respawning, then each child gets `grace` seconds to exit before SIGKILL.
  void stop(double grace);

 private:
  struct child {
    std::string group;
    std::vector<std::string> argv;
    std::unique_ptr<child_process> process;
    std::vector<steady::time_point> respawns;
  };
  void watch();

  std::function<std::vector<std::string>()> env_;
  std::function<void(const std::string&)> log_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool respawning_ = true;
  bool stopped_ = false;
  std::vector<child> children_;
  std::thread watcher_;
};

}  // namespace troupe::actors
