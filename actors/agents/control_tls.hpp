#pragma once
// TLS on the control port (CAF 0.17's OpenSSL module): mutual, with the cluster's CA. Both ends
// load the module and name their certificate, key and the CA in the actor system's config; the
// module then requires a certificate from the peer and checks its chain against that CA, and
// OpenSSL checks its role (core/pki.hpp). The control process publishes its registry with
// caf::openssl::publish and an agent connects through the module's middleman actor.
//
// CAF's module gives no hook for a handshake that fails: the peer is dropped without a word.
// So that such a refusal is still logged with the peer's address, this file takes the call
// the module makes to SSL_CTX_set_verify (the executable's symbol comes first in the dynamic
// linker's lookup) and, after passing it on to OpenSSL, adds an info callback that logs fatal
// alerts (core/tls_log.hpp).
#include <functional>
#include <string>

#include <caf/actor_system_config.hpp>
#include <caf/io/middleman_actor.hpp>

namespace troupe::actors {

struct tls_files {
  std::string cert_path, key_path, ca_path;
};

// Loads CAF's OpenSSL module into `cfg` with these files.
void use_control_tls(caf::actor_system_config& cfg, const tls_files& files);

// Where refused TLS peers of this process's control connections are logged (replacing the
// previous; null: nowhere). Set before the first connection.
void set_control_tls_log(std::function<void(const std::string&)> log);

// The middleman actor of `sys` that connects and publishes with TLS.
caf::io::middleman_actor tls_middleman(caf::actor_system& sys);

}  // namespace troupe::actors
