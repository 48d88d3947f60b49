#pragma once
// A run's door for agents, brought up: the agent_registry spawned and published on a control
// port (mutual TLS, actors/agents/control_tls.hpp; a free port on the same host), the join endpoint
// at `address` that hands agents their certificate, ticket and that port
// (actors/agents/join_endpoint.hpp), and, with `wait_agents`, the wait until that many joined. The
// runtime calls it from start() when runtime_options::listen is set; the actor system must have
// been made with use_control_tls unless `keys` is null (--insecure).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/agents/agent_registry.hpp"
#include "actors/agents/join_endpoint.hpp"

namespace troupe::actors {

struct agent_listen_options {
  std::string address;                       // HOST:PORT of the join endpoint (port 0: a free one)
  std::uint16_t control_port = 0;            // the registry's (0: a free one)
  std::shared_ptr<const cluster_keys> keys;  // null: --insecure (no TLS, no token)
  std::function<std::string()> token;        // the token agents must bring (with keys)
  int wait_agents = 0;
  double wait_seconds = 60.0;
  // The registry's: the caller's log (the listener's own lines go there too), the config's
  // agent groups, the directory and the task manager to tell of joins, and the run's start.
  // The listener fills in the version, tickets, middleman and records.
  agent_registry_options registry;
  // Called once the port is bound, before the wait: where `troupe run` starts its child agents.
  std::function<void(std::uint16_t port)> on_listening;
};

struct agent_listener {
  caf::actor registry;
  std::uint16_t port = 0;          // the join endpoint's
  std::uint16_t control_port = 0;  // the registry's
  std::shared_ptr<join_endpoint> endpoint;
  std::shared_ptr<agent_records> records = std::make_shared<agent_records>();
};

// Throws runtime_failure when the address cannot be bound, or when fewer than wait_agents
// joined within wait_seconds (the registry is then told to send its agents away).
agent_listener listen_for_agents(caf::actor_system& sys, const agent_listen_options& options);

}  // namespace troupe::actors
