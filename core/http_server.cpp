#include "core/http_server.hpp"

#include <httplib.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include "core/error.hpp"
#include "core/launcher_env.hpp"
#include "core/secret.hpp"
#include "core/tls_log.hpp"

namespace troupe {
namespace {

std::unique_ptr<httplib::Server> make_server(const std::shared_ptr<http_security>& s) {
  if (s->cert_path.empty() && s->key_path.empty()) return std::make_unique<httplib::Server>();
  ignore_broken_pipes();
  auto srv = std::make_unique<httplib::SSLServer>([s](SSL_CTX& ctx) {
    SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
    if (SSL_CTX_use_certificate_chain_file(&ctx, s->cert_path.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(&ctx, s->key_path.c_str(), SSL_FILETYPE_PEM) != 1)
      return false;
    log_tls_failures(&ctx, &s->log);
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

http_server::http_server(http_security security)
    : security_(std::make_shared<http_security>(std::move(security))) {
  server_ = make_server(security_);
  tls_ = !security_->cert_path.empty();
  // SO_REUSEADDR (a restart binds at once over connections in TIME_WAIT), but not cpp-httplib's
  // default SO_REUSEPORT, with which a second server on a taken port starts and the kernel
  // splits the clients between the two.
  server_->set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  // A client that stops sending is dropped instead of holding a thread.
  server_->set_read_timeout(10, 0);
  server_->set_write_timeout(10, 0);
  if (!security_->token) return;
  server_->set_pre_routing_handler([s = security_](const httplib::Request& req,
                                                   httplib::Response& res) {
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
                    ": this port has no authentication; bind it to loopback, or pass "
                    "--insecure to serve it to any host that reaches it");
}

}  // namespace troupe
