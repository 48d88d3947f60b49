// `troupe bench faults [--runs 5] [--steps 120] [--at 50] [--classes kill,hang,partition]`: how
// fast the runtime sees a failure and gets back to training. One small job (MLP on synthetic
// blobs over a group of two cpu devices and one of one) runs --runs times per fault class with
// the fault injected at step --at; prints per class the median detection time (the fault firing
// to the job seeing it: faults.detect_ms), the median recovery time (detection to the next
// completed step: faults.recovery_ms), the failures by class and the worst lost_steps.
//
// --processes: the same question for agents, real processes joined over CAF's middleman. The
// bench publishes an agent registry on loopback, starts `troupe agent` children, and per run
// kills one (SIGKILL) or stops one (SIGSTOP); detect_ms runs from the signal to the registry
// seeing the agent lost (its down message: the closed socket, or the heartbeat timing out).
// Agents host no device workers yet, so there is no recovery to time there.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include <caf/io/middleman.hpp>

#include "actors/agent_registry.hpp"
#include "actors/caf_compat.hpp"
#include "core/clock.hpp"

#include "apps/args.hpp"
#include "apps/bench_run.hpp"
#include "apps/command.hpp"
#include "core/error.hpp"
#include "core/fault_spec.hpp"
#include "core/median.hpp"

namespace troupe::apps {
namespace {

const char* usage =
    "usage: troupe bench faults [--runs 5] [--steps 120] [--at 50]\n"
    "                           [--classes kill,hang,partition] [--log-dir DIR]\n\n"
    "A small job (MLP 32-16 on 4096 synthetic blobs, batch 96, sync: ps) over group `pair` (two\n"
    "cpu devices) and group `solo` (one), --runs times per fault: kill:pair/0, hang:pair/0 or\n"
    "partition:pair at step --at. Prints per fault the median detect_ms (fault fired -> job saw\n"
    "the failure), median recovery_ms (detection -> next completed step), the failure classes\n"
    "seen and the worst lost_steps (0 expected). Hangs and partitions are found by the step\n"
    "deadline (at least 0.5 s, else a multiple of recent step times); kills by the worker's\n"
    "death.\n\n"
    "--processes: per run, start a `troupe agent` child joined to a registry on loopback, then\n"
    "kill it (SIGKILL) or stop it (SIGSTOP); print the median detect_ms (signal -> the agent\n"
    "seen lost). --classes takes kill and stop there.";

std::string fault_spec(const std::string& kind, std::int64_t at) {
  if (kind == "kill") return "kill:pair/0@" + std::to_string(at);
  if (kind == "hang") return "hang:pair/0@" + std::to_string(at);
  if (kind == "partition")
    return "partition:pair@" + std::to_string(at) + "-" + std::to_string(at + 5);
  throw input_error("--classes: unknown fault '" + kind + "' (kill, hang or partition)");
}

std::string config_yaml(std::int64_t steps, const std::string& fault) {
  std::ostringstream y;
  y << "cluster:\n  groups:\n"
    << "    - {name: pair, device: cpu, count: 2, threads: 1}\n"
    << "    - {name: solo, device: cpu, count: 1, threads: 1}\n"
    << "jobs:\n  - name: faults\n    model: {kind: mlp, hidden: [32, 16]}\n"
    << "    data: {dataset: synthetic, synthetic: {kind: blobs, samples: 4096}, split: even}\n"
    << "    optimizer: {kind: sgd, lr: 0.05}\n    batch: 96\n    epochs: 1000\n"
    << "    max_steps: " << steps << "\n    sync: {mode: ps}\n    seed: 3\n"
    << "    faults: [" << fault << "]\n";
  return y.str();
}

// A fault spec ("kill:pair/0@50") as the YAML map a faults entry is.
std::string fault_yaml(const std::string& spec) {
  const auto f = config::parse_fault(spec, "--classes");
  std::string y = "{step: " + std::to_string(f.step) + ", action: " + name_of(f.action) +
                  ", target: " + f.target;
  if (f.until_step >= 0) y += ", until_step: " + std::to_string(f.until_step);
  return y + "}";
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(item);
  return out;
}

// The registry's log lines with the moment each arrived.
class timed_log {
 public:
  void add(const std::string& line) {
    std::lock_guard<std::mutex> lock(mu_);
    lines_.emplace_back(steady::now(), line);
    cv_.notify_all();
  }
  // When a line holding `text` arrived, waiting up to `seconds` for it.
  std::optional<steady::time_point> wait_for(const std::string& text, double seconds) {
    std::unique_lock<std::mutex> lock(mu_);
    std::optional<steady::time_point> at;
    cv_.wait_for(lock, std::chrono::duration<double>(seconds), [&] {
      for (const auto& [t, line] : lines_)
        if (line.find(text) != std::string::npos) at = t;
      return at.has_value();
    });
    return at;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::pair<steady::time_point, std::string>> lines_;
};

pid_t start_agent(std::uint16_t port, const std::string& name) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string join = "127.0.0.1:" + std::to_string(port);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (!std::freopen("/dev/null", "w", stderr)) ::_exit(127);
    ::execl(self.c_str(), self.c_str(), "agent", "--join", join.c_str(), "--name", name.c_str(),
            "--group", name.c_str(), "--join-timeout", "10", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

void reap(pid_t pid) {
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

int run_processes(long long runs, const std::vector<std::string>& kinds) {
  for (const auto& k : kinds)
    if (k != "kill" && k != "stop")
      throw input_error("--classes with --processes: unknown fault '" + k + "' (kill or stop)");
  caf::actor_system_config cfg;
  actors::register_types(cfg);
  actors::use_agent_middleman(cfg);
  caf::actor_system sys{cfg};
  timed_log log;
  actors::agent_registry_options o;
  o.version = actors::troupe_version();
  o.log = [&log](const std::string& line) { log.add(line); };
  const auto registry = sys.spawn(actors::agent_registry, std::move(o));
  const auto port = sys.middleman().publish(registry, 0, "127.0.0.1", true);
  if (!port) throw runtime_failure("bench faults: cannot listen on 127.0.0.1");
  std::printf("# troupe bench faults --processes: %lld runs per fault, agents on 127.0.0.1:%u\n",
              runs, static_cast<unsigned>(*port));
  std::printf("%-8s %12s %10s\n", "fault", "detect_ms", "detected");
  int serial = 0;
  for (const auto& kind : kinds) {
    std::vector<double> detect;
    for (long long r = 0; r < runs; ++r) {
      const std::string name = "b" + std::to_string(++serial);
      const pid_t pid = start_agent(*port, name);
      if (!log.wait_for("joined: agent " + name + " ", 30)) {
        reap(pid);
        throw runtime_failure("bench faults: agent " + name + " did not join within 30 s");
      }
      const auto t0 = steady::now();
      ::kill(pid, kind == "kill" ? SIGKILL : SIGSTOP);
      const auto seen = log.wait_for("lost agent " + name + " ", 30);
      if (seen) detect.push_back(std::chrono::duration<double, std::milli>(*seen - t0).count());
      reap(pid);
    }
    std::printf("%-8s %12.1f %7zu/%lld\n", kind.c_str(), median(detect), detect.size(), runs);
    std::fflush(stdout);
  }
  caf::anon_send_exit(registry, caf::exit_reason::user_shutdown);
  return exit_ok;
}

int run(const std::vector<std::string>& argv) {
  const args a(argv, {"runs", "steps", "at", "classes", "log-dir"}, {"processes"});
  if (!a.positionals().empty())
    throw input_error("unexpected argument '" + a.positionals()[0] + "'");
  const auto runs = a.get_int("runs", 5);
  const auto steps = a.get_int("steps", 120);
  const auto at = a.get_int("at", 50);
  if (runs < 1 || at < 1 || steps < at + 10)
    throw input_error("--runs >= 1, --at >= 1 and --steps >= --at + 10");
  if (a.has("processes")) return run_processes(runs, split_list(a.get_or("classes", "kill,stop")));
  const auto kinds = split_list(a.get_or("classes", "kill,hang,partition"));
  for (const auto& k : kinds) fault_spec(k, at);  // refuses an unknown one before any run
  runtime_options opts;
  opts.log_dir = a.get_or("log-dir", "");
  opts.wait_seconds = 600;

  std::printf("# troupe bench faults: %lld runs per fault at step %lld of %lld\n",
              static_cast<long long>(runs), static_cast<long long>(at),
              static_cast<long long>(steps));
  std::printf("%-32s %12s %14s %-20s %10s\n", "fault", "detect_ms", "recovery_ms", "classes",
              "lost_steps");
  for (const auto& kind : kinds) {
    std::vector<double> detect, recovery;
    std::map<std::string, std::int64_t> classes;
    std::int64_t lost = 0;
    for (long long r = 0; r < runs; ++r) {
      const auto run = run_one_job(config_yaml(steps, fault_yaml(fault_spec(kind, at))),
                                   "bench-faults.yaml", opts, "bench faults");
      const auto& f = run.job.faults;
      detect.insert(detect.end(), f.detect_ms.begin(), f.detect_ms.end());
      recovery.insert(recovery.end(), f.recovery_ms.begin(), f.recovery_ms.end());
      for (const auto& [c, n] : f.failures_by_class) classes[c] += n;
      lost = std::max(lost, f.lost_steps);
    }
    std::string seen;
    for (const auto& [c, n] : classes)
      seen += (seen.empty() ? "" : ",") + c + "=" + std::to_string(n);
    std::printf("%-32s %12.1f %14.1f %-20s %10lld\n", fault_spec(kind, at).c_str(), median(detect),
                median(recovery), seen.c_str(), static_cast<long long>(lost));
    std::fflush(stdout);
  }
  return exit_ok;
}

const command_registrar reg{{"bench faults", "time to detect and recover, per fault", usage, run}};

}  // namespace
}  // namespace troupe::apps
