// `troupe serve [--cluster FILE] [--listen HOST:PORT] [--http HOST:PORT] [--state DIR]`: the
// control plane as a daemon (service/job_service.hpp). Agents join at --listen, clients and
// orchestration apps talk to the HTTP API at --http. SIGTERM or SIGINT: no more jobs are taken,
// running ones end at their next step boundary after a checkpoint and stay queued for the next
// start, exit 0 (a second signal: at once).
#include <malloc.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>

#include "apps/api_security.hpp"
#include "apps/args.hpp"
#include "apps/command.hpp"
#include "apps/console.hpp"
#include "apps/stop_signals.hpp"
#include "collectives/zmq/zmq_link.hpp"
#include "core/cluster_keys.hpp"
#include "core/directory_lock.hpp"
#include "core/launcher_env.hpp"
#include "core/secret.hpp"
#include "service/http_api.hpp"
#include "service/job_service.hpp"

namespace troupe::apps {
namespace {

const flag_set flags{{"cluster", "listen", "http", "state", "token", "stop-seconds", "log-format",
                      "control-port", "data-ports"},
                     {"insecure", "reset"},
                     {}};

int run(const std::vector<std::string>& argv) {
  // A long-running service: at most two malloc arenas. glibc gives threads arenas of their own
  // and keeps what they free there; jobs load and free their data on whichever threads ran
  // them, and serve grew to about 950 MB after 20 small Fashion-MNIST jobs. With two arenas and
  // the free pages handed back at each job's end (job_service), it stays near 100 MB.
  ::mallopt(M_ARENA_MAX, 2);
  const args a(argv, flags);
  a.no_positionals();
  console::configure("troupe serve", console::parse_format(a.get_or("log-format", "text")));
  const auto env = process_env();
  service::service_options o;
  o.state_dir = default_state_dir(a.get_or("state", ""));
  o.reset = a.has("reset");
  o.cluster_file = a.get_or("cluster", "");
  o.listen = a.get_or("listen", "127.0.0.1:7070");
  o.control_port = control_port_flag(a);
  if (const auto ports = a.get("data-ports"))
    collectives::set_data_ports(collectives::parse_port_range(*ports, "--data-ports"));
  o.join_token = a.get("token").value_or(env("TROUPE_TOKEN").value_or(""));
  o.insecure = a.has("insecure");
  o.log_format = a.get_or("log-format", "text");
  const double stop_seconds = a.get_double("stop-seconds", 25.0);
  if (!(stop_seconds > 0)) throw input_error("--stop-seconds must be positive");
  std::error_code self_error;
  o.agent_program = std::filesystem::read_symlink("/proc/self/exe", self_error).string();
  o.log = [](const std::string& line) { console::runtime_line(redact(line)); };
  // One service per state directory, taken before anything in it is read or written (the
  // keys, the database): a second serve on it would share the database and rewrite the keys.
  ensure_state_dir(o.state_dir);
  directory_lock owner(o.state_dir, "troupe serve");
  service::http_options h;
  h.address = a.get_or("http", "127.0.0.1:7080");
  const auto http_host = parse_join(h.address, "--http", true).host;
  h.security = api_security(o.state_dir, o.join_token, h.address, o.insecure, o.log);

  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  stop_signals signals([&](int sig) {
    console::info(std::string(sig == SIGTERM ? "SIGTERM" : "SIGINT") +
                  ": stopping (again to stop at once)");
    std::lock_guard<std::mutex> lock(mu);
    stop = true;
    cv.notify_all();
  });
  service::job_service svc(o);
  service::http_api api(svc, h);
  console::info(std::string("API on ") + (o.insecure ? "http" : "https") + "://" + http_host + ":" +
                std::to_string(api.port()) + ", agents join at " +
                parse_join(o.listen, "--listen", true).host + ":" +
                std::to_string(svc.listen_port()));
  if (!o.insecure)
    console::info("agents and clients on this machine find the token and the CA in " + o.state_dir +
                  "; elsewhere give them --token (troupe token --state " + o.state_dir +
                  ") and --ca " + o.state_dir + "/tls/ca.crt");
  {
    std::unique_lock<std::mutex> lock(mu);
    // --insecure: the warning again every minute while it serves.
    while (!cv.wait_for(lock, std::chrono::seconds(60), [&] { return stop; }))
      if (o.insecure)
        o.log(
            "warning: --insecure: the API and the agents' port take requests from any host "
            "that reaches them, without a token or TLS");
  }
  // Kubernetes waits 30 s by default before SIGKILL: the jobs get stop_seconds of it.
  svc.stop(stop_seconds);
  console::info("stopped");
  return exit_ok;
}

const command_registrar reg{
    {"serve", "run the control plane as a service: agents join, jobs are submitted over HTTP",
     "usage: troupe serve [--cluster FILE] [--state DIR] [--listen HOST:PORT] [--http HOST:PORT]\n"
     "                    [--token T | --insecure] [--stop-seconds S] [--log-format F] "
     "[--reset]\n"
     "                    [--control-port P] [--data-ports LO-HI]\n\n"
     "  --cluster FILE   a YAML file with the cluster: (groups) the service runs jobs on; kept in\n"
     "                   the state directory, so a restart needs it no more\n"
     "  --state DIR      the job database (SQLite), logs, checkpoints and the cluster's\n"
     "                   credentials: its CA, certificates and token, made at the first start\n"
     "                   (TROUPE_STATE; default ./troupe-state)\n"
     "  --listen H:P     where agents join (default 127.0.0.1:7070)\n"
     "  --control-port P the port agents hold their control connection on (default: a free\n"
     "                   one, which they learn when they join)\n"
     "  --data-ports LO-HI  the ports tcp data links between hosts bind here (default: any\n"
     "                   free one); open them, --listen's and --control-port's to agents\n"
     "  --http H:P       the HTTP API (HTTPS, bearer token), /healthz and /readyz (default\n"
     "                   127.0.0.1:7080)\n"
     "  --token T        agents and clients must bring this token instead of STATE/token\n"
     "                   (also TROUPE_TOKEN)\n"
     "  --insecure       no TLS and no token on either port (a warning every minute)\n"
     "  --stop-seconds S on SIGTERM, how long running jobs get to reach a checkpoint\n"
     "                   (default 25)\n"
     "  --log-format F   text (default) or json: each line of the jobs' log files and of\n"
     "                   stderr one JSON object (time, level, job, generation, step, message)\n"
     "  --reset          start although the job database is missing or empty while the state\n"
     "                   directory holds earlier jobs' logs or checkpoints; new jobs are numbered\n"
     "                   after them\n\n"
     "Clients: troupe submit, status, logs, cancel, inject, agents. Each finds the service\n"
     "as `troupe status --server URL` does (or TROUPE_SERVER; default https://127.0.0.1:7080).\n\n"
     "exit: 0 stopped by SIGTERM or SIGINT, 2 bad flags, cluster or state",
     run, flags}};

}  // namespace
}  // namespace troupe::apps
