#pragma once
// The HTTP+JSON API of `troupe serve` (and, reading only, of `troupe run --http`) under /api/v1/
// (docs/API.md has one request and response per endpoint), /metrics, /healthz, /readyz. The clients
// (`troupe submit`, `status`, ...) use it, and so may any orchestration app. cpp-httplib serves it
// on a thread pool of its own.
//
// Every answer is JSON; a failure has an `error` field: 400 bad input (a job file's
// `file:line: key: message`, a bad spec), 404 an unknown job or route, 413 a body over the limit,
// 503 while the service stops, 500 anything else. A request is applied whole or not at all: a
// client that goes away mid-request leaves nothing half-written (a submission is one
// transaction, taken only once the whole body is read).
#include <cstdint>
#include <string>

#include "core/http_server.hpp"

namespace troupe::service {

using troupe::http_security;
using troupe::http_server;

class api_backend;

struct http_options {
  std::string address = "127.0.0.1:7080";  // HOST:PORT; port 0 picks a free one
  std::size_t max_body_bytes = 1 << 20;    // a job file is a few KiB
  // TLS and the bearer token (core/http_server.hpp). /healthz, /readyz and the dashboard's own
  // files are open (a probe has no token; the dashboard asks for it, then sends it).
  http_security security;
};

// Whether `path` is served without a token.
bool api_open_path(const std::string& path);

// The routes above, on a server of the caller's (http_api's own, or a fuzz harness's).
void add_api_routes(httplib::Server& server, api_backend& backend, const http_options& options);

class http_api {
 public:
  // Binds at once (input_error naming the address when it cannot) and serves until destroyed.
  http_api(api_backend& backend, http_options options);
  http_api(const http_api&) = delete;
  http_api& operator=(const http_api&) = delete;
  std::uint16_t port() const { return http_.port(); }

 private:
  http_server http_;
};

}  // namespace troupe::service
