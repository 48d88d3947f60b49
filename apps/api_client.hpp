#pragma once
// The clients' side of the service's HTTP API (`troupe submit`, `status`, ...): one request, its
// JSON answer, and the service's `error` turned into the exit codes of every command (a 4xx
// answer is bad input, exit 2; an unreachable service or a 5xx, exit 1).
#include <string>

#include <nlohmann/json.hpp>

namespace troupe::apps {

class args;

// --server URL, else TROUPE_SERVER, else the local serve's default.
std::string server_url(const args& a);

class api_client {
 public:
  explicit api_client(std::string url);
  // Throw input_error (4xx) or runtime_failure (unreachable, 5xx), quoting the service's error.
  nlohmann::json get(const std::string& path) const;
  nlohmann::json post(const std::string& path, const nlohmann::json& body) const;

 private:
  std::string url_;
};

}  // namespace troupe::apps
