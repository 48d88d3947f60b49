#include "core/tls_log.hpp"

#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <sys/socket.h>

namespace troupe {
namespace {

int log_index() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

void free_peer(void*, void* ptr, CRYPTO_EX_DATA*, int, long, void*) {
  delete static_cast<std::string*>(ptr);
}

// The peer's address, noted when the handshake starts: a peer that breaks it off may reset the
// connection, after which the socket no longer says who it was.
int peer_index() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, free_peer);
  return index;
}

int hook_index() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

void on_info(const SSL* ssl, int where, int ret) {
  if (where & SSL_CB_HANDSHAKE_START) {
    if (auto* hook = reinterpret_cast<void (*)(int)>(
            SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), hook_index())))
      hook(SSL_get_fd(ssl));
    auto* s = const_cast<SSL*>(ssl);
    if (!SSL_get_ex_data(s, peer_index()))
      SSL_set_ex_data(s, peer_index(), new std::string(peer_of_socket(SSL_get_fd(ssl))));
    return;
  }
  if (!(where & SSL_CB_ALERT)) return;
  // Only fatal alerts end a connection; a close_notify warning is an ordinary goodbye.
  if (std::string(SSL_alert_type_string(ret)) != "F") return;
  // After the handshake a fatal alert is a connection ending (a peer gone): the one who holds
  // the connection says so in its own words.
  if (SSL_is_init_finished(ssl)) return;
  auto* log = static_cast<const std::function<void(const std::string&)>*>(
      SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), log_index()));
  if (!log || !*log) return;
  const auto* noted = static_cast<const std::string*>(SSL_get_ex_data(ssl, peer_index()));
  const auto peer = noted ? *noted : peer_of_socket(SSL_get_fd(ssl));
  const bool sent = where & SSL_CB_WRITE;
  const unsigned long e = sent ? ERR_peek_last_error() : 0;
  // The connection ended under us (a peer gone mid-handshake): nobody refused anybody.
  if (peer == "unknown peer" || (e && ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING))
    return;
  std::string why = SSL_alert_desc_string_long(ret);
  if (why == "unknown") why = "alert " + std::to_string(ret & 0xff);
  // What OpenSSL found wrong on our side (no certificate, one from another CA, not TLS at all).
  if (e)
    if (const char* reason = ERR_reason_error_string(e)) why += ": " + std::string(reason);
  (*log)(std::string("refused a TLS connection from ") + peer + ": " +
         (sent ? "" : "the peer refused us: ") + why +
         (sent ? "" : " (it does not trust this cluster's certificate, or we do not trust its)"));
}

}  // namespace

std::string peer_of_socket(int fd) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (fd < 0 || ::getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    return "unknown peer";
  char host[NI_MAXHOST], port[NI_MAXSERV];
  if (::getnameinfo(reinterpret_cast<sockaddr*>(&a), len, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "unknown peer";
  return std::string(host) + ":" + port;
}

void ignore_broken_pipes() {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, nullptr);
}

void log_tls_failures(ssl_ctx_st* ctx, const std::function<void(const std::string&)>* log) {
  SSL_CTX_set_ex_data(ctx, log_index(), const_cast<std::function<void(const std::string&)>*>(log));
  SSL_CTX_set_info_callback(ctx, on_info);
}

void on_tls_handshake_start(ssl_ctx_st* ctx, void (*hook)(int fd)) {
  SSL_CTX_set_ex_data(ctx, hook_index(), reinterpret_cast<void*>(hook));
}

}  // namespace troupe
