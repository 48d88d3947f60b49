#include "actors/agents/control_tls.hpp"

#include <dlfcn.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <mutex>

#include <caf/actor_system.hpp>
#include <caf/openssl/manager.hpp>

#include "core/tls_log.hpp"

namespace troupe::actors {
namespace {

std::mutex log_mu;
std::function<void(const std::string&)> current_log;  // under log_mu
// What every control connection's context logs through. Never freed: a context of CAF's may
// outlive any owner of ours and still log through it.
const auto* control_log = new std::function<void(const std::string&)>([](const std::string& line) {
  std::lock_guard<std::mutex> lock(log_mu);
  if (current_log) current_log(line);
});

}  // namespace

void use_control_tls(caf::actor_system_config& cfg, const tls_files& files) {
  ignore_broken_pipes();
  cfg.load<caf::openssl::manager>();
  cfg.openssl_certificate = files.cert_path;
  cfg.openssl_key = files.key_path;
  cfg.openssl_cafile = files.ca_path;
}

void set_control_tls_log(std::function<void(const std::string&)> log) {
  std::lock_guard<std::mutex> lock(log_mu);
  current_log = std::move(log);
}

caf::io::middleman_actor tls_middleman(caf::actor_system& sys) {
  return sys.openssl_manager().actor_handle();
}

}  // namespace troupe::actors

namespace {

template <class F>
F next_symbol(const char* name) {
  return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

// CAF's OpenSSL module calls this once per connection while it builds the connection's context.
extern "C" void SSL_CTX_set_verify(SSL_CTX* ctx, int mode, SSL_verify_cb callback) {
  static const auto real = next_symbol<void (*)(SSL_CTX*, int, SSL_verify_cb)>(__func__);
  real(ctx, mode, callback);
  troupe::log_tls_failures(ctx, troupe::actors::control_log);
}

// OpenSSL's rule for SSL_get_error: the thread's error queue must be empty before each TLS I/O
// call. CAF's module serves every connection of a process on one thread and never empties it,
// so one connection's error (an agent killed mid-read) was taken for the next connection's:
// the control process dropped healthy agents with it. These clear the queue first.
extern "C" int SSL_read(SSL* ssl, void* buf, int num) {
  static const auto real = next_symbol<int (*)(SSL*, void*, int)>(__func__);
  ERR_clear_error();
  return real(ssl, buf, num);
}

extern "C" int SSL_write(SSL* ssl, const void* buf, int num) {
  static const auto real = next_symbol<int (*)(SSL*, const void*, int)>(__func__);
  ERR_clear_error();
  return real(ssl, buf, num);
}

extern "C" int SSL_accept(SSL* ssl) {
  static const auto real = next_symbol<int (*)(SSL*)>(__func__);
  ERR_clear_error();
  return real(ssl);
}

extern "C" int SSL_connect(SSL* ssl) {
  static const auto real = next_symbol<int (*)(SSL*)>(__func__);
  ERR_clear_error();
  return real(ssl);
}
