#pragma once
// A TLS handshake that checks the server's certificate the way OpenSSL does it inside the
// handshake (chain to the given CA, host name), so that a failure ends with an alert the
// server sees and logs. cpp-httplib checks only after a completed handshake and then just
// closes, which the server cannot tell from a client that left.
#include <string>

namespace troupe {

// Connects to host:port within `timeout_seconds` and shakes hands trusting `ca_path` only.
// Returns "" when the server's certificate verifies, else what is wrong; unreachable servers
// say so too (the caller tells the two apart with `reached`).
std::string probe_server_certificate(const std::string& host, int port, const std::string& ca_path,
                                     double timeout_seconds, bool& reached);

}  // namespace troupe
