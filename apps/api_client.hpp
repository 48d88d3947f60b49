#pragma once
// The clients' side of the service's HTTP API (`troupe submit`, `status`, ...): one request, its
// JSON answer, and the service's `error` turned into the exit codes of every command (a 4xx
// answer is bad input, exit 2; an unreachable service or a 5xx, exit 1).
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "apps/args.hpp"

namespace troupe::apps {

// A client command's flags: the value flags every client takes (--server, --token, --ca,
// --state) and its own. A function, not a global, so that commands may build theirs during
// static initialisation.
flag_set client_flags(std::set<std::string> booleans = {}, std::set<std::string> repeatable = {});

// Where the service is and how to prove who we are: --server URL, else TROUPE_SERVER, else the
// local serve's default (https://127.0.0.1:7080). For https the token and the cluster CA come
// from --token / --ca, else TROUPE_TOKEN / TROUPE_CA, else the state directory of a serve on
// this machine (--state, TROUPE_STATE, ./troupe-state).
struct api_target {
  std::string url;
  std::string token;
  std::string ca_path;
};
api_target api_target_of(const args& a);

class api_client {
 public:
  explicit api_client(api_target target);
  explicit api_client(const args& a) : api_client(api_target_of(a)) {}
  // Throw input_error (4xx) or runtime_failure (unreachable, 5xx), quoting the service's error.
  nlohmann::json get(const std::string& path) const;
  nlohmann::json post(const std::string& path, const nlohmann::json& body) const;

 private:
  api_target target_;
};

}  // namespace troupe::apps
