// `troupe agent [--join HOST:PORT] [--group NAME] [--device cpu|sim|cuda] [--count N]
// [--threads T] [--name ID] [--join-timeout S] [--data-host ADDR]`: offers one resource group to a
// control process
// (`troupe run CONFIG --listen HOST:PORT`), stays joined until the run ends, and rejoins when
// the control process comes back after losing it (actors/agents/agent.hpp).
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>

#include "actors/agents/agent.hpp"
#include "apps/args.hpp"
#include "apps/command.hpp"
#include "apps/console.hpp"
#include "apps/stop_signals.hpp"
#include "collectives/zmq/zmq_link.hpp"
#include "core/cluster_keys.hpp"
#include "core/http_server.hpp"
#include "core/launcher_env.hpp"
#include "core/secret.hpp"
#include "service/agent_metrics.hpp"

namespace troupe::apps {
namespace {

// The flag, else the TROUPE_* variable, else `fallback`.
std::string flag_or_env(const args& a, const std::string& flag, const env_lookup& env,
                        const std::string& var, const std::string& fallback) {
  if (auto v = a.get(flag)) return *v;
  return env(var).value_or(fallback);
}

int positive(const std::string& text, const std::string& what) {
  std::size_t used = 0;
  long long n = 0;
  try {
    n = std::stoll(text, &used);
  } catch (const std::exception&) {
  }
  if (used != text.size() || n < 1 || n > 4096)
    throw input_error(what + ": expected a count from 1 to 4096, got '" + text.substr(0, 40) + "'");
  return static_cast<int>(n);
}

const flag_set flags{
    {"join", "group", "device", "count", "threads", "name", "join-timeout", "token", "ca", "state",
     "data-host", "parent", "metrics", "log-format", "data-ports"},
    {"insecure"},
    {}};

int run(const std::vector<std::string>& argv) {
  const args a(argv, flags);
  a.no_positionals();
  const auto env = process_env();
  actors::agent_options o;
  const auto join = resolve_join(a.get("join"), env);
  o.host = join.host;
  o.port = join.port;
  const auto rank = launcher_rank(env);
  const std::string default_name =
      rank ? "agent-" + *rank : "agent-" + std::to_string(static_cast<long long>(::getpid()));
  o.name = flag_or_env(a, "name", env, "TROUPE_NAME", default_name);
  console::configure("troupe agent " + o.name,
                     console::parse_format(a.get_or("log-format", "text")));
  o.group = flag_or_env(a, "group", env, "TROUPE_GROUP", o.name);
  const auto device = flag_or_env(a, "device", env, "TROUPE_DEVICE", "cpu");
  const auto kind = parse_name<device_kind>(device);
  if (!kind)
    throw input_error("--device must be " + names_listed<device_kind>() + ", got '" +
                      device.substr(0, 40) + "'");
  o.device = *kind;
  o.count = positive(flag_or_env(a, "count", env, "TROUPE_COUNT", "1"), "--count");
  o.threads = positive(flag_or_env(a, "threads", env, "TROUPE_THREADS", "1"), "--threads");
  // The token and the CA: flags, else TROUPE_TOKEN / TROUPE_CA, else the state directory of a
  // control process on this machine.
  o.insecure = a.has("insecure");
  if (!o.insecure) {
    const auto keys = find_member_keys(a.get("token").value_or(""), a.get("ca").value_or(""),
                                       default_state_dir(a.get("state").value_or("")));
    o.token = keys.token;
    o.ca_path = keys.ca_path;
    // Read where it was found at each join attempt: a token in the state directory may be
    // rotated while the agent runs, and its rejoin must bring the new one.
    o.token_source = [flag = a.get("token").value_or(""), ca = a.get("ca").value_or(""),
                      dir = default_state_dir(a.get("state").value_or(""))] {
      return find_member_keys(flag, ca, dir).token;
    };
  }
  o.data_host = flag_or_env(a, "data-host", env, "TROUPE_DATA_HOST", "");
  if (const auto ports = a.get("data-ports"))
    collectives::set_data_ports(collectives::parse_port_range(*ports, "--data-ports"));
  o.parent = a.get_int("parent", 0);
  if (o.parent < 0) throw input_error("--parent must be a process id");
  o.join_timeout_seconds = a.get_double("join-timeout", 60.0);
  if (!(o.join_timeout_seconds > 0)) throw input_error("--join-timeout must be positive");
  // SIGTERM / SIGINT (Kubernetes, Slurm, systemd, Ctrl-C): stop serving, leave the run, exit 0;
  // the run's supervision moves this group's work. A second signal ends it at once.
  auto stop = std::make_shared<std::atomic<bool>>(false);
  o.stop = stop;
  stop_signals signals([stop](int) { stop->store(true); });
  // --metrics: its own /metrics for Prometheus (an agent has no other HTTP port).
  o.status = std::make_shared<actors::agent_status>();
  std::unique_ptr<service::agent_metrics_server> metrics;
  if (const auto at = a.get("metrics")) {
    check_loopback_or_insecure(*at, "--metrics", o.insecure);
    metrics = std::make_unique<service::agent_metrics_server>(*at, o, o.status,
                                                              o.insecure ? "" : o.token);
    console::info("/metrics on port " + std::to_string(metrics->port()));
  }
  return actors::run_agent(o, [](const std::string& line) { console::runtime_line(redact(line)); });
}

const command_registrar reg{
    {"agent", "offer one resource group of this host to a control process (troupe run --listen)",
     "usage: troupe agent [--join HOST:PORT] [--group NAME] [--device cpu|sim|cuda] [--count N]\n"
     "                    [--threads T] [--name ID] [--join-timeout SECONDS]\n"
     "                    [--data-host ADDR] [--token T] [--ca FILE] [--state DIR]\n"
     "                    [--insecure] [--metrics HOST:PORT] [--log-format text|json]\n"
     "                    [--data-ports LO-HI]\n\n"
     "  --join HOST:PORT   the control process (troupe run CONFIG --listen HOST:PORT); else\n"
     "                     TROUPE_JOIN, else MASTER_ADDR:MASTER_PORT (torchrun), else the first\n"
     "                     host of SLURM_STEP_NODELIST with TROUPE_PORT (srun)\n"
     "  --group NAME       the resource group offered (TROUPE_GROUP; default: the name)\n"
     "  --device KIND      cpu, sim or cuda (TROUPE_DEVICE; default cpu)\n"
     "  --count N          devices in the group (TROUPE_COUNT; default 1)\n"
     "  --threads T        BLAS threads per device (TROUPE_THREADS; default 1)\n"
     "  --name ID          this agent's id (TROUPE_NAME; default agent-RANK from SLURM_PROCID\n"
     "                     or RANK, else agent-PID)\n"
     "  --token T          the cluster's join token (TROUPE_TOKEN; else STATE/token, read\n"
     "                     again at each join attempt)\n"
     "  --ca FILE          the cluster CA's certificate (TROUPE_CA; else STATE/tls/ca.crt)\n"
     "  --state DIR        the control process's state directory, on its machine\n"
     "                     (TROUPE_STATE; default ./troupe-state)\n"
     "  --insecure         join a control process that runs with --insecure (no TLS, no token)\n"
     "  --join-timeout S   give up after S seconds without a join (default 60); a lost control\n"
     "                     process is rejoined within the same limit\n"
     "  --data-host ADDR   the address tcp data links bind on (TROUPE_DATA_HOST; default: the\n"
     "                     interface that routes to the control process)\n"
     "  --data-ports LO-HI the ports its tcp data links bind (default: any free one): open\n"
     "                     them to the control process's host\n"
     "  --metrics H:P      serve /metrics (Prometheus; needs the token as a bearer token) and\n"
     "                     /healthz there; port 0: a free one; loopback unless --insecure\n"
     "  --log-format F     text (default) or json: each line this agent prints one JSON\n"
     "                     object (time, level, message)\n"
     "  --parent PID       exit when process PID exits (troupe run sets it for the agents of\n"
     "                     process: separate groups)\n\n"
     "The agent stays joined until the run ends. When the run's config has a group of this\n"
     "name with process: agent (or separate), the group's workers compute here: the control\n"
     "process sends rows over ZeroMQ (ipc on the same host, tcp between hosts). In ps and local\n"
     "mode it sends the parameters too and gets gradient sums back; in allreduce (replicated\n"
     "optimizer) the replica lives here and the gradients are reduced over a ring. A killed,\n"
     "stopped or cut-off agent is seen as lost within about a second and its work moves to\n"
     "the other members.\n\n"
     "exit: 0 the run ended, 2 refused (another version, its name or group taken, a wrong\n"
     "token, a control process whose certificate the CA does not sign) or bad flags, 1 no\n"
     "control process within --join-timeout",
     run, flags}};

}  // namespace
}  // namespace troupe::apps
