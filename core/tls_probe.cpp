#include "core/tls_probe.hpp"

#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "core/tls_log.hpp"

namespace troupe {
namespace {

// A connected socket, or -1 (with `why`) when none answered within the timeout.
int connect_with_timeout(const std::string& host, int port, double seconds, std::string& why) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &list)) {
    why = std::string("cannot resolve ") + host + ": " + ::gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (auto* a = list; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
      why = std::strerror(errno);
      ::close(fd);
      fd = -1;
      continue;
    }
    pollfd p{fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    if (::poll(&p, 1, static_cast<int>(seconds * 1000)) != 1 ||
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
      why = err ? std::strerror(err) : "no answer within the timeout";
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(list);
  if (fd >= 0) {
    // Blocking from here, with the timeout on each read and write.
    ::fcntl(fd, F_SETFL, 0);
    timeval tv{static_cast<time_t>(seconds),
               static_cast<suseconds_t>((seconds - static_cast<time_t>(seconds)) * 1e6)};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  }
  return fd;
}

}  // namespace

std::string probe_server_certificate(const std::string& host, int port, const std::string& ca_path,
                                     double timeout_seconds, bool& reached) {
  reached = false;
  std::string why;
  const int fd = connect_with_timeout(host, port, timeout_seconds, why);
  if (fd < 0) return why;
  reached = true;
  ignore_broken_pipes();
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()),
                                                        SSL_CTX_free);
  if (!ctx || SSL_CTX_load_verify_locations(ctx.get(), ca_path.c_str(), nullptr) != 1) {
    ::close(fd);
    ERR_clear_error();
    return "cannot read the CA certificate " + ca_path;
  }
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(ctx.get()), SSL_free);
  SSL_set_fd(ssl.get(), fd);
  SSL_set_tlsext_host_name(ssl.get(), host.c_str());
  SSL_set1_host(ssl.get(), host.c_str());  // a name, or an IP address literal
  ERR_clear_error();
  std::string result;
  if (SSL_connect(ssl.get()) != 1) {
    const long v = SSL_get_verify_result(ssl.get());
    result = v != X509_V_OK ? X509_verify_cert_error_string(v) : "no TLS handshake";
    ERR_clear_error();
  } else {
    SSL_shutdown(ssl.get());
  }
  ::close(fd);
  return result;
}

}  // namespace troupe
