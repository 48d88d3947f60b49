#include "service/http_server.hpp"

#include <httplib.h>

#include "core/error.hpp"
#include "core/launcher_env.hpp"

namespace troupe::service {

http_server::http_server() : server_(std::make_unique<httplib::Server>()) {
  // A client that stops sending is dropped instead of holding a thread.
  server_->set_read_timeout(10, 0);
  server_->set_write_timeout(10, 0);
}

http_server::~http_server() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

void http_server::start(const std::string& address, const std::string& flag) {
  const auto where = parse_join(address, flag, true);
  const int port = where.port == 0
                       ? server_->bind_to_any_port(where.host)
                       : (server_->bind_to_port(where.host, where.port) ? where.port : -1);
  if (port <= 0) throw input_error(flag + " " + address + ": cannot listen there");
  port_ = static_cast<std::uint16_t>(port);
  thread_ = std::thread([this] { server_->listen_after_bind(); });
}

void check_loopback_or_insecure(const std::string& address, const std::string& flag,
                                bool insecure) {
  if (insecure || is_loopback(parse_join(address, flag, true).host)) return;
  throw input_error(flag + " " + address +
                    ": this port has no authentication yet; bind it to loopback, or pass "
                    "--insecure to serve it to any host that reaches it");
}

}  // namespace troupe::service
