#include "core/http_server.hpp"

#include <httplib.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/launcher_env.hpp"
#include "core/request_deadlines.hpp"
#include "core/secret.hpp"
#include "core/tls_log.hpp"

namespace troupe {
namespace {

// A request's headers, and then its body, must arrive within this; so must the next request on
// a kept-alive connection.
constexpr double request_seconds = 10.0;
// Connections the kernel queues before the pool takes them (cpp-httplib 0.11 listens with 5).
constexpr int listen_backlog = 1024;

std::unique_ptr<httplib::Server> make_server(const std::shared_ptr<http_security>& s) {
  if (s->cert_path.empty() && s->key_path.empty()) return std::make_unique<httplib::Server>();
  ignore_broken_pipes();
  auto srv = std::make_unique<httplib::SSLServer>([s](SSL_CTX& ctx) {
    SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
    if (SSL_CTX_use_certificate_chain_file(&ctx, s->cert_path.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(&ctx, s->key_path.c_str(), SSL_FILETYPE_PEM) != 1)
      return false;
    log_tls_failures(&ctx, &s->log);
    on_tls_handshake_start(&ctx, &deadline_pool::on_handshake_start);
    return true;
  });
  if (!srv->is_valid())
    throw input_error(s->cert_path + ", " + s->key_path +
                      ": cannot serve TLS with this certificate and key");
  return srv;
}

}  // namespace

std::string bearer_of(const std::string& authorization) {
  static const std::string scheme = "Bearer ";
  if (authorization.size() <= scheme.size() || authorization.compare(0, scheme.size(), scheme) != 0)
    return "";
  return authorization.substr(scheme.size());
}

http_server::http_server(http_security security, std::size_t threads)
    : security_(std::make_shared<http_security>(std::move(security))) {
  server_ = make_server(security_);
  tls_ = !security_->cert_path.empty();
  // SO_REUSEADDR (a restart binds at once over connections in TIME_WAIT), but not cpp-httplib's
  // default SO_REUSEPORT, with which a second server on a taken port starts and the kernel
  // splits the clients between the two.
  server_->set_socket_options([fd = listen_fd_](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    *fd = sock;
  });
  // A client that stops sending is dropped instead of holding a thread; one that sends slowly
  // is dropped at the request deadline (core/request_deadlines.hpp).
  server_->set_read_timeout(10, 0);
  server_->set_write_timeout(10, 0);
  server_->new_task_queue = [threads] { return new deadline_pool(threads, request_seconds); };
  server_->set_logger(
      [](const httplib::Request&, const httplib::Response&) { deadline_pool::answered(); });
  server_->set_pre_routing_handler([s = security_](const httplib::Request& req,
                                                   httplib::Response& res) {
    deadline_pool::headers_read();
    if (!s->token) return httplib::Server::HandlerResponse::Unhandled;
    if (s->open_path && s->open_path(req.path)) return httplib::Server::HandlerResponse::Unhandled;
    const auto given = bearer_of(req.get_header_value("Authorization"));
    if (same_secret(given, s->token())) return httplib::Server::HandlerResponse::Unhandled;
    const std::string why = given.empty() ? "no bearer token" : "a wrong bearer token";
    if (s->log)
      s->log("refused " + req.method + " " + req.path.substr(0, 100) + " from " + req.remote_addr +
             ":" + std::to_string(req.remote_port) + ": " + why);
    res.status = 401;
    res.set_header("WWW-Authenticate", "Bearer");
    res.set_content(
        "{\"error\":\"" + why + ": send Authorization: Bearer TOKEN (the cluster's join token)\"}",
        "application/json");
    return httplib::Server::HandlerResponse::Handled;
  });
}

http_server::~http_server() {
  if (!thread_.joinable()) return;
  // cpp-httplib 0.11's stop() does nothing until its listen loop has begun on our thread: a
  // server dropped right after start() (an error just after it, at a service's start) would
  // serve on and this join would never return. Wait for the loop first, with a deadline.
  const auto until = steady::now() + std::chrono::seconds(5);
  while (!server_->is_running() && !*listen_done_ && steady::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  server_->stop();
  thread_.join();
}

void http_server::start(const std::string& address, const std::string& flag) {
  const auto where = parse_join(address, flag, true);
  const int port = where.port == 0
                       ? server_->bind_to_any_port(where.host)
                       : (server_->bind_to_port(where.host, where.port) ? where.port : -1);
  if (port <= 0) throw input_error(flag + " " + address + ": cannot listen there");
  // listen(2) again on a listening socket sets its backlog anew.
  if (*listen_fd_ >= 0) ::listen(*listen_fd_, listen_backlog);
  port_ = static_cast<std::uint16_t>(port);
  thread_ = std::thread([this, done = listen_done_] {
    server_->listen_after_bind();
    *done = true;
  });
}

void check_loopback_or_insecure(const std::string& address, const std::string& flag,
                                bool insecure) {
  if (insecure || is_loopback(parse_join(address, flag, true).host)) return;
  throw input_error(flag + " " + address +
                    ": this port has no authentication; bind it to loopback, or pass "
                    "--insecure to serve it to any host that reaches it");
}

}  // namespace troupe
