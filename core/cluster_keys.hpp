#pragma once
// The cluster's credentials in a control process's state directory, made at its first start:
//
//   STATE/token          the join token (0600): agents and API clients must bring it
//   STATE/tls/ca.key     the cluster CA's private key (0600); never leaves this directory
//   STATE/tls/ca.crt     the CA's certificate: what agents and clients trust
//   STATE/tls/control.*  the control process's key (0600) and certificate, the certificate
//                        issued anew at each start for this host's current names and addresses
//                        and the names of the one it replaces
//
// A second control process on the same state directory (`troupe run --listen` beside `troupe
// serve`) uses the same credentials: creation is under a file lock. On the machine of the
// control process an agent or client finds the token and the CA there, so the single-machine
// recipes need no flags; elsewhere they take --token / TROUPE_TOKEN and --ca / TROUPE_CA.
#include <string>
#include <vector>

#include "core/pki.hpp"

namespace troupe {

struct cluster_keys {
  std::string state_dir;
  std::string token_path, ca_path, ca_key_path, control_key_path, control_cert_path;
  pki::authority ca;
  bool created = false;  // made by this call
};

// Loads the credentials under `state_dir`, making what is missing, and issues the control
// certificate for `names` (host names and addresses peers may reach it by; this host's names,
// its interfaces' addresses, loopback, the comma-separated TROUPE_CERT_NAMES and the names of
// the control certificate there, when this CA issued it for this key, are added).
// Registers the token as a secret (never printed). input_error naming the file when one is
// unreadable, unsafe (readable by others) or not what it should be; runtime_failure when the
// directory cannot be written.
cluster_keys open_cluster_keys(const std::string& state_dir, std::vector<std::string> names);

// The token in STATE/token, read now (it may have been rotated since the start).
std::string read_token(const std::string& state_dir);

// Writes a new token to STATE/token and returns it (the old one stops working at once for new
// joins and API calls; joined agents stay joined).
std::string rotate_token(const std::string& state_dir);

// Where an agent or client finds its credentials: the flag's value, else the environment
// variable, else the state directory's file (--state, TROUPE_STATE, or ./troupe-state).
// input_error saying all three places when none has it.
struct member_keys {
  std::string token;
  std::string ca_path;
};
member_keys find_member_keys(const std::string& token_flag, const std::string& ca_flag,
                             const std::string& state_dir);

// The state directory a command uses: --state, else TROUPE_STATE, else ./troupe-state.
std::string default_state_dir(const std::string& flag_value);

// Makes the state directory `dir` if it is missing (mode 0700; one the user made keeps the mode
// they chose). input_error naming it when the path is empty, not a directory, cannot be made, or
// is not writable.
void ensure_state_dir(const std::string& dir);

}  // namespace troupe
