#pragma once
// The join endpoint of a listening control process: the address agents are given (--listen,
// `troupe agent --join`). An agent POSTs /join with the cluster's token as a bearer token, its
// name and version, and a certificate signing request; it gets back a certificate signed by the
// cluster's CA (30 days, role agent), a one-time ticket for its hello, and the control port
// where the registry is published with mutual TLS. HTTPS with the control process's
// certificate, so the agent checks it talks to its cluster before it shows its token.
//
// With --insecure: plain HTTP, no token, no certificate; the answer still names the control
// port and a ticket, so agents join the same way.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "actors/agents/join_tickets.hpp"
#include "core/cluster_keys.hpp"
#include "core/http_server.hpp"

namespace troupe::actors {

struct join_endpoint_options {
  std::string address;  // HOST:PORT (port 0: a free one)
  // The cluster's credentials (null: --insecure).
  std::shared_ptr<const cluster_keys> keys;
  // The token agents must bring, asked at each join (a rotated token applies at once).
  std::function<std::string()> token;
  std::uint16_t control_port = 0;
  std::shared_ptr<join_tickets> tickets;
  std::function<void(const std::string&)> log;
};

class join_endpoint {
 public:
  // Binds at once: input_error naming the address when it cannot.
  explicit join_endpoint(join_endpoint_options options);
  std::uint16_t port() const { return http_.port(); }

 private:
  join_endpoint_options options_;
  http_server http_;
};

// The common name of an agent's certificate.
std::string agent_common_name(const std::string& agent);

}  // namespace troupe::actors
