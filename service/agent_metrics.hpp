#pragma once
// An agent's `/metrics` (troupe agent --metrics HOST:PORT): what it offers and what it has done,
// in Prometheus' text format, on a small HTTP server of its own (an agent has no API).
#include <cstdint>
#include <memory>
#include <string>

#include "actors/agents/agent.hpp"
#include "core/http_server.hpp"

namespace troupe::service {

using troupe::http_server;

// The exposition of `status` for the agent `o` describes.
std::string agent_metrics_text(const actors::agent_options& o, const actors::agent_status& status);

class agent_metrics_server {
 public:
  // Binds at once (input_error naming the address when it cannot) and serves /metrics and
  // /healthz until destroyed.
  // `token` non-empty: /metrics needs it as a bearer token (/healthz is open).
  agent_metrics_server(const std::string& address, actors::agent_options options,
                       std::shared_ptr<const actors::agent_status> status,
                       const std::string& token = "");
  std::uint16_t port() const { return http_.port(); }

 private:
  http_server http_;
};

}  // namespace troupe::service
