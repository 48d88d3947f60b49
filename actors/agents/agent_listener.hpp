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
  std::function<void(const std::string&)> log;
  std::vector<expected_group> groups;          // the config's agent groups (empty: any group)
  std::shared_ptr<agent_directory> directory;  // filled as agents join (optional)
  caf::actor notify;                           // told of every join (the task manager)
  // Called once the port is bound, before the wait: where `troupe run` starts its child agents.
  std::function<void(std::uint16_t port)> on_listening;
  steady::time_point t0 = steady::now();  // the run's start
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
