#pragma once
// An HTTP server on a thread pool of its own (cpp-httplib): routes are added to server(), then
// start() binds (port 0: a free one) and serves until the object goes. Troupe's HTTP ports use
// it: the API of serve and `run --http`, the join endpoint of a listening control process, and
// an agent's /metrics.
//
// Secure by default (http_security): TLS with the cluster's certificate, and every request but
// the open paths must carry the token as `Authorization: Bearer TOKEN` (compared in constant
// time; a missing or wrong one gets 401). Refusals and failed TLS handshakes are logged with the
// peer's address, never with what it sent as a token.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace httplib {
class Server;
}

namespace troupe {

struct http_security {
  // TLS: the certificate (chain) and key files; both empty: plain HTTP.
  std::string cert_path, key_path;
  // The token a request must bring, asked at each request (so a rotated token takes effect at
  // once); null: no token needed.
  std::function<std::string()> token;
  // Paths served without a token (health probes, the dashboard's own files).
  std::function<bool(const std::string& path)> open_path;
  // Gets a line per refusal.
  std::function<void(const std::string&)> log;
};

class http_server {
 public:
  // `threads`: the pool that serves connections. A port that slow clients may crowd needs
  // room for probes beside them while each waits for its request deadline.
  explicit http_server(http_security security = {}, std::size_t threads = 16);
  // Stops serving and joins the thread.
  ~http_server();
  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  httplib::Server& server() { return *server_; }
  // Binds HOST:PORT (input_error naming `flag` and the address when it cannot) and serves.
  void start(const std::string& address, const std::string& flag);
  std::uint16_t port() const { return port_; }
  bool tls() const { return tls_; }

 private:
  std::unique_ptr<httplib::Server> server_;
  std::shared_ptr<http_security> security_;
  bool tls_ = false;
  std::uint16_t port_ = 0;
  std::shared_ptr<int> listen_fd_ = std::make_shared<int>(-1);  // set while binding
  std::shared_ptr<std::atomic<bool>> listen_done_ = std::make_shared<std::atomic<bool>>(false);
  std::thread thread_;
};

// A listener without authentication binds to loopback, unless the user says --insecure:
// input_error naming the flag and the address otherwise.
void check_loopback_or_insecure(const std::string& address, const std::string& flag, bool insecure);

// "Bearer TOKEN" -> TOKEN ("" when the header is not a bearer token).
std::string bearer_of(const std::string& authorization);

}  // namespace troupe
