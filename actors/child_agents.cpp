#include "actors/child_agents.hpp"

#include <unistd.h>

namespace troupe::actors {

std::vector<config::group_config> agent_groups(const config::cluster_config& cluster) {
  std::vector<config::group_config> out;
  for (const auto& g : cluster.groups)
    if (g.process != group_process::local) out.push_back(g);
  return out;
}

std::vector<std::unique_ptr<child_process>> start_child_agents(
    const std::string& program, const config::cluster_config& cluster, std::uint16_t port,
    const std::string& token) {
  std::vector<std::unique_ptr<child_process>> out;
  for (const auto& g : cluster.groups) {
    if (g.process != group_process::separate) continue;
    std::vector<std::string> argv{program,          "agent",
                                  "--join",         "127.0.0.1:" + std::to_string(port),
                                  "--group",        g.name,
                                  "--name",         g.name,
                                  "--device",       name_of(g.device),
                                  "--count",        std::to_string(g.count),
                                  "--threads",      std::to_string(g.threads),
                                  "--join-timeout", "30",
                                  "--parent",       std::to_string(::getpid())};
    std::vector<std::string> env;
    if (!token.empty()) env.push_back("TROUPE_TOKEN=" + token);
    out.push_back(std::make_unique<child_process>(argv, env));
  }
  return out;
}

}  // namespace troupe::actors
