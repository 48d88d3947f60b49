#pragma once
// An agent's side of the join endpoint (actors/agents/join_endpoint.hpp): one POST /join per join
// attempt, over HTTPS checked against the cluster's CA (chain and host name) before the token
// is sent. The answer is the control port, a one-time ticket and, with TLS, the agent's
// certificate for the control connection.
#include <cstdint>
#include <string>

namespace troupe::actors {

struct enroll_request {
  std::string host;
  std::uint16_t port = 0;
  std::string name;
  std::string token;    // with TLS
  std::string ca_path;  // with TLS; empty: plain HTTP (--insecure)
  std::string key_pem;  // the agent's key, for its certificate request
  double timeout_seconds = 2.0;
};

struct enroll_answer {
  enum class outcome { joined, refused, unreachable };
  outcome result = outcome::unreachable;
  std::string why;  // refused or unreachable: what to say
  std::uint16_t control_port = 0;
  std::string ticket;
  std::string certificate;  // PEM (with TLS)
};

enroll_answer enroll(const enroll_request& request);

}  // namespace troupe::actors
