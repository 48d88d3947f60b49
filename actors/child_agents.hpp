#pragma once
// `process: separate` groups: `troupe run` starts one `troupe agent` child per such group on
// this host, joined to its own listener on loopback, so the cross-process path is one command
// away. The children exit when the run says bye; whatever is left is killed and reaped when the
// runtime ends.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/child_process.hpp"
#include "core/config.hpp"

namespace troupe::actors {

// The groups of `cluster` whose workers compute in an agent (process: separate or agent).
std::vector<config::group_config> agent_groups(const config::cluster_config& cluster);

// Starts `program agent --join 127.0.0.1:PORT --group G --name G ...` for each separate group.
// The token, when set, goes through the environment (TROUPE_TOKEN), never the command line.
std::vector<std::unique_ptr<child_process>> start_child_agents(
    const std::string& program, const config::cluster_config& cluster, std::uint16_t port,
    const std::string& token);

}  // namespace troupe::actors
