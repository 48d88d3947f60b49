#pragma once
// An HTTP server on a thread pool of its own (cpp-httplib): routes are added to server(), then
// start() binds (port 0: a free one) and serves until the object goes. Both of Troupe's HTTP
// ports use it: the API of serve and `run --http` (service/http_api.hpp), and an agent's
// /metrics (service/agent_metrics.hpp).
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

namespace httplib {
class Server;
}

namespace troupe::service {

class http_server {
 public:
  http_server();
  // Stops serving and joins the thread.
  ~http_server();
  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  httplib::Server& server() { return *server_; }
  // Binds HOST:PORT (input_error naming `flag` and the address when it cannot) and serves.
  void start(const std::string& address, const std::string& flag);
  std::uint16_t port() const { return port_; }

 private:
  std::unique_ptr<httplib::Server> server_;
  std::uint16_t port_ = 0;
  std::thread thread_;
};

// A listener of an API without authentication binds to loopback, unless the user says
// --insecure: input_error naming the flag and the address otherwise.
void check_loopback_or_insecure(const std::string& address, const std::string& flag, bool insecure);

}  // namespace troupe::service
