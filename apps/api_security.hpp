#pragma once
// How `troupe serve` and `troupe run --http` protect their HTTP API: TLS with the control
// process's certificate (issued by the cluster CA in the state directory) and the cluster's
// token as a bearer token, read at each request so that `troupe token --rotate` applies at
// once. --insecure: plain HTTP without a token, loopback only unless said so, a warning.
#include <functional>
#include <string>

#include "core/http_server.hpp"

namespace troupe::apps {

// `token`: the --token / TROUPE_TOKEN override ("": the state directory's).
http_security api_security(const std::string& state_dir, const std::string& token,
                           const std::string& address, bool insecure,
                           std::function<void(const std::string&)> log);

}  // namespace troupe::apps
