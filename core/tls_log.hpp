#pragma once
// Failed TLS handshakes, logged with the peer's address: a peer that brings a certificate from
// another CA, or none, or that speaks no TLS at all, is refused by OpenSSL before any Troupe code
// sees a byte; this is how the refusal still reaches the log.
#include <functional>
#include <string>

struct ssl_ctx_st;

namespace troupe {

// From now on, every fatal TLS alert sent or received on a connection of `ctx` is passed to
// `log` as one line naming the peer's address and the alert. `log` must outlive `ctx`.
void log_tls_failures(ssl_ctx_st* ctx, const std::function<void(const std::string&)>* log);

// From now on, `hook` gets the socket of every connection of `ctx` whose handshake starts, on
// the thread that serves it (core/request_deadlines.hpp names the socket to its watchdog so).
// Needs log_tls_failures on `ctx` (its callback is the one OpenSSL calls).
void on_tls_handshake_start(ssl_ctx_st* ctx, void (*hook)(int fd));

// OpenSSL writes to its socket with write(2): a peer that went away would raise SIGPIPE and end
// the whole process (a client closing early could kill the service). Every user of TLS calls
// this: SIGPIPE is ignored process-wide, and the write fails with EPIPE instead.
void ignore_broken_pipes();

// The address of the peer of socket `fd` as HOST:PORT ("unknown peer" when it has none).
std::string peer_of_socket(int fd);

}  // namespace troupe
