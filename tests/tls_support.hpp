#pragma once
// A raw client for tests that play a peer Troupe did not invite: connect to a loopback port,
// optionally complete a TLS handshake (checking nothing, as an attacker would), send bytes and
// go away.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

namespace troupe::testing {

// A test plays TLS clients whose peer may close first: a write then fails instead of raising
// SIGPIPE, as in Troupe's own processes.
inline const bool broken_pipes_ignored = [] {
  ::signal(SIGPIPE, SIG_IGN);
  return true;
}();

// Connects to 127.0.0.1:`port` (-1 when it cannot).
inline int connect_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Sends `bytes` in the clear and closes.
inline void send_plain_and_close(int port, const std::string& bytes) {
  const int fd = connect_loopback(port);
  REQUIRE(fd >= 0);
  ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  ::close(fd);
}

// Completes a TLS handshake without a certificate of its own, sends `bytes` inside it and
// closes. Returns whether the handshake succeeded (a port that requires a client certificate
// refuses it).
inline bool send_tls_and_close(int port, const std::string& bytes) {
  const int fd = connect_loopback(port);
  REQUIRE(fd >= 0);
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  SSL* ssl = SSL_new(ctx);
  SSL_set_fd(ssl, fd);
  const bool shook = SSL_connect(ssl) == 1;
  if (shook && !bytes.empty()) SSL_write(ssl, bytes.data(), static_cast<int>(bytes.size()));
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  ::close(fd);
  return shook;
}

// A slowloris: completes a TLS handshake, then sends a request's headers one byte every
// `every` until the server cuts it off or the object goes. cut() says whether the server did.
class slow_tls_client {
 public:
  slow_tls_client(int port, std::chrono::milliseconds every) {
    fd_ = connect_loopback(port);
    if (fd_ < 0) return;
    ctx_ = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_NONE, nullptr);
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, fd_);
    if (SSL_connect(ssl_) != 1) return;
    thread_ = std::thread([this, every] {
      const std::string request = "GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\nX-Slow: ";
      for (std::size_t i = 0; !stop_; ++i) {
        const char c = i < request.size() ? request[i] : 'a';
        if (SSL_write(ssl_, &c, 1) != 1) {
          cut_ = true;
          return;
        }
        for (auto waited = std::chrono::milliseconds(0); waited < every && !stop_;
             waited += std::chrono::milliseconds(50))
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
  }
  ~slow_tls_client() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (ssl_) SSL_free(ssl_);
    if (ctx_) SSL_CTX_free(ctx_);
    if (fd_ >= 0) ::close(fd_);
  }
  slow_tls_client(const slow_tls_client&) = delete;
  slow_tls_client& operator=(const slow_tls_client&) = delete;

  bool connected() const { return thread_.joinable(); }
  bool cut() const { return cut_; }

 private:
  int fd_ = -1;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  std::thread thread_;
  std::atomic<bool> stop_{false}, cut_{false};
};

}  // namespace troupe::testing
