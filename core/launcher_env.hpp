#pragma once
// What a launcher already says about a process, read from its environment, so `troupe agent`
// runs under Slurm (srun) or a torchrun-style launcher without a wrapper script. Flags win over
// TROUPE_* variables, which win over the launcher's own.
//
//   join address : --join | TROUPE_JOIN | MASTER_ADDR:MASTER_PORT (torchrun)
//                  | first host of SLURM_STEP_NODELIST : TROUPE_PORT (Slurm; the control process
//                    runs on the step's first node)
//   rank         : SLURM_PROCID | RANK (names the agent "agent-RANK" when nothing else does)
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace troupe {

// Looks up an environment variable (std::getenv in the binary; a table in tests).
using env_lookup = std::function<std::optional<std::string>(const std::string&)>;
env_lookup process_env();

struct join_address {
  std::string host;
  std::uint16_t port = 0;
  std::string from;  // where it came from, for messages: "--join", "TROUPE_JOIN", ...
};

// `flag`: the --join value, if given. Throws input_error naming the source when the address is
// malformed, or when no source gives one.
join_address resolve_join(const std::optional<std::string>& flag, const env_lookup& env);

// "HOST:PORT" -> join_address (port 1 to 65535; 0 too with `any_port`, a listener's "pick a
// free one"). Throws input_error naming `from`.
join_address parse_join(const std::string& text, const std::string& from, bool any_port = false);

// Whether a listener on `host` is reachable from this machine only (127.x, ::1, localhost).
bool is_loopback(const std::string& host);

// The first host of a Slurm node list: "node[01-04,07],gpu3" -> "node01", "gpu3" -> "gpu3".
// Throws input_error on an empty or malformed list.
std::string first_slurm_host(const std::string& nodelist);

// The launcher's rank of this process, if it gives one.
std::optional<std::string> launcher_rank(const env_lookup& env);

}  // namespace troupe
