#include "actors/agents/child_agents.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

namespace troupe::actors {
namespace {

std::string exit_text(int status) {
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  return "status " + std::to_string(status);
}

}  // namespace

std::vector<config::group_config> agent_groups(const config::cluster_config& cluster) {
  std::vector<config::group_config> out;
  for (const auto& g : cluster.groups)
    if (g.process != group_process::local) out.push_back(g);
  return out;
}

int agents_to_wait_for(const config::run_config& run) {
  int needed = 0;
  for (const auto& g : agent_groups(run.cluster)) {
    bool rigid = g.process == group_process::separate;
    for (const auto& j : run.jobs)
      rigid = rigid || (!j.elastic &&
                        (j.resources.empty() || std::find(j.resources.begin(), j.resources.end(),
                                                          g.name) != j.resources.end()));
    if (rigid) ++needed;
  }
  return needed;
}

child_agents::child_agents(const std::string& program, const config::cluster_config& cluster,
                           const std::string& host, std::uint16_t port,
                           std::function<std::vector<std::string>()> env, bool insecure,
                           std::function<void(const std::string&)> log)
    : log_(std::move(log)) {
  env_ = std::move(env);
  for (const auto& g : cluster.groups) {
    if (g.process != group_process::separate) continue;
    child c;
    c.group = g.name;
    c.argv = {program,          "agent",
              "--join",         host + ":" + std::to_string(port),
              "--group",        g.name,
              "--name",         g.name,
              "--device",       name_of(g.device),
              "--count",        std::to_string(g.count),
              "--threads",      std::to_string(g.threads),
              "--join-timeout", "30",
              "--parent",       std::to_string(::getpid())};
    if (insecure) c.argv.push_back("--insecure");
    c.process = std::make_unique<child_process>(c.argv, env_());
    children_.push_back(std::move(c));
  }
  if (!children_.empty()) watcher_ = std::thread([this] { watch(); });
}

child_agents::~child_agents() {
  stop(5.0);
}

void child_agents::stop_respawning() {
  std::lock_guard<std::mutex> lock(mu_);
  respawning_ = false;
}

void child_agents::stop(double grace) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    respawning_ = false;
    stopped_ = true;
  }
  cv_.notify_all();
  if (watcher_.joinable()) watcher_.join();
  for (auto& c : children_)
    if (c.process) c.process->stop(grace);
}

void child_agents::watch() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopped_) {
    cv_.wait_for(lock, std::chrono::milliseconds(50));
    if (!respawning_) continue;
    for (auto& c : children_) {
      if (c.process->running()) continue;
      const auto now = steady::now();
      c.respawns.erase(
          std::remove_if(c.respawns.begin(), c.respawns.end(),
                         [&](steady::time_point t) { return now - t > std::chrono::seconds(60); }),
          c.respawns.end());
      const auto why = exit_text(c.process->stop(0));
      if (static_cast<int>(c.respawns.size()) >= max_respawns) continue;  // said once below
      c.respawns.push_back(now);
      try {
        c.process = std::make_unique<child_process>(c.argv, env_());
        log_("child agent " + c.group + " ended (" + why + "); started again (" +
             std::to_string(c.respawns.size()) + " of " + std::to_string(max_respawns) +
             " in a minute)");
      } catch (const std::exception& e) {
        log_("child agent " + c.group + " ended (" + why + ") and cannot start again: " + e.what());
      }
      if (static_cast<int>(c.respawns.size()) == max_respawns)
        log_("child agent " + c.group + ": no more restarts within this minute");
    }
  }
}

}  // namespace troupe::actors
