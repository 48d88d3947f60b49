#pragma once
// This host as the network sees it: its name, and the address of the interface that routes to
// a peer. A data-plane socket binds and advertises that address: a wildcard (0.0.0.0) cannot be
// advertised, and a name is not an address ZeroMQ can bind.
#include <string>

namespace troupe {

// gethostname(), or "unknown".
std::string host_name();

// The IPv4 address of the interface this host would use to reach `peer` (a name or an
// address). Nothing is sent: a UDP socket is connected and asked for its local address. Throws
// runtime_failure naming `peer` when it cannot be resolved or routed to.
std::string local_address_towards(const std::string& peer);

}  // namespace troupe
