// `troupe bench faults [--runs 5] [--steps 120] [--at 50] [--classes kill,hang,partition]`: how
// fast the runtime sees a failure and gets back to training. One small job (MLP on synthetic
// blobs over a group of two cpu devices and one of one) runs --runs times per fault class with
// the fault injected at step --at; prints per class the median detection time (the fault firing
// to the job seeing it: faults.detect_ms), the median recovery time (detection to the next
// completed step: faults.recovery_ms), the failures by class and the worst lost_steps.
//
// --processes: the same question for real processes. Groups `a` and `b` compute in child agents
// (process: separate), `solo` in the control process; at step --at agent `a` gets SIGKILL or
// SIGSTOP. detect_ms runs from the signal to the job's failure line for its worker (the agent's
// closed connection, the registry's heartbeat, or the step deadline, whichever comes first);
// recovery_ms is the job's own (detection to the next completed step). A partition puts agent
// `a` in a network namespace of the bench's own (apps/netns_pair.hpp) and drops its packets.
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

#include <optional>

#include "core/clock.hpp"
#include "core/config_load.hpp"

#include "apps/args.hpp"
#include "apps/bench_run.hpp"
#include "apps/command.hpp"
#include "apps/netns_pair.hpp"
#include "core/child_process.hpp"
#include "core/error.hpp"
#include "core/fault_spec.hpp"
#include "core/median.hpp"

namespace troupe::apps {
namespace {

const char* usage =
    "usage: troupe bench faults [--runs 5] [--steps 120] [--at 50] [--sync ps|allreduce|local]\n"
    "                           [--classes kill,hang,partition] [--log-dir DIR]\n\n"
    "A small job (MLP 32-16 on 4096 synthetic blobs, batch 96, sync: ps unless --sync says\n"
    "otherwise; local averages every 4 steps) over group `pair` (two\n"
    "cpu devices) and group `solo` (one), --runs times per fault: kill:pair/0, hang:pair/0 or\n"
    "partition:pair at step --at. Prints per fault the median detect_ms (fault fired -> job saw\n"
    "the failure), median recovery_ms (detection -> next completed step), the failure classes\n"
    "seen and the worst lost_steps (0 expected). Hangs and partitions are found by the step\n"
    "deadline (at least 0.5 s, else a multiple of recent step times); kills by the worker's\n"
    "death.\n\n"
    "--processes: groups a and b compute in child agents (process: separate), solo here; at\n"
    "step --at agent a gets SIGKILL or SIGSTOP (--classes kill,stop,partition). partition: a's\n"
    "agent runs in a network namespace of the bench's own, joined to this process (in another)\n"
    "by a veth pair with no default route, and at step --at nftables drops all its packets\n"
    "(needs root or CAP_NET_ADMIN, iproute2 and nftables; skipped with a message otherwise).\n"
    "detect_ms runs from the signal or the cut to the job's failure line for a/0; recovery_ms\n"
    "as above.";

std::string fault_spec(const std::string& kind, std::int64_t at) {
  if (kind == "kill") return "kill:pair/0@" + std::to_string(at);
  if (kind == "hang") return "hang:pair/0@" + std::to_string(at);
  if (kind == "partition")
    return "partition:pair@" + std::to_string(at) + "-" + std::to_string(at + 5);
  throw input_error("--classes: unknown fault '" + kind + "' (kill, hang or partition)");
}

// --sync as the job's sync section.
std::string sync_yaml(const std::string& mode) {
  if (mode == "ps" || mode == "allreduce") return "{mode: " + mode + "}";
  if (mode == "local") return "{mode: local, period: 4}";
  throw input_error("--sync: unknown mode '" + mode + "' (ps, allreduce or local)");
}

// The bench's job (MLP on synthetic blobs) over `groups` (YAML lines), with `tail` (YAML lines)
// appended to the job; `sync` as sync_yaml gives it.
std::string config_yaml(std::int64_t steps, const std::string& groups, const std::string& tail,
                        const std::string& sync) {
  std::ostringstream y;
  y << "cluster:\n  groups:\n"
    << groups << "jobs:\n  - name: faults\n    model: {kind: mlp, hidden: [32, 16]}\n"
    << "    data: {dataset: synthetic, synthetic: {kind: blobs, samples: 4096}, split: even}\n"
    << "    optimizer: {kind: sgd, lr: 0.05}\n    batch: 96\n    epochs: 1000\n"
    << "    max_steps: " << steps << "\n    sync: " << sync << "\n    seed: 3\n"
    << tail;
  return y.str();
}

// In-process: group `pair` (two cpu devices) and `solo` (one), with the injected fault.
std::string thread_config_yaml(std::int64_t steps, const std::string& fault,
                               const std::string& sync) {
  return config_yaml(steps,
                     "    - {name: pair, device: cpu, count: 2, threads: 1}\n"
                     "    - {name: solo, device: cpu, count: 1, threads: 1}\n",
                     "    faults: [" + fault + "]\n", sync);
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

// --processes: group `a` in an agent (`a_process`: separate, a child; agent, one the bench
// starts itself), `b` in a child agent, `solo` here. `hold_at` >= 0: steps `hold_at` and the next
// each wait `hold_seconds` for solo's part (a delay fault), so that what the bench does when it
// hears of step `hold_at` (the partition's nftables rule) lands while the job still runs.
std::string process_config_yaml(std::int64_t steps, const std::string& sync,
                                const std::string& a_process = "separate",
                                std::int64_t hold_at = -1, double hold_seconds = 0.0) {
  std::string faults;
  if (hold_at >= 0)
    faults = "    faults: [{step: " + std::to_string(hold_at) +
             ", action: delay, target: solo, seconds: " + std::to_string(hold_seconds) +
             ", until_step: " + std::to_string(hold_at + 1) + "}]\n";
  return config_yaml(
      steps,
      "    - {name: a, device: cpu, count: 1, threads: 1, process: " + a_process +
          "}\n"
          "    - {name: b, device: cpu, count: 1, threads: 1, process: separate}\n"
          "    - {name: solo, device: cpu, count: 1, threads: 1}\n",
      "    supervision: {crash: migrate, hang: migrate, lost-group: migrate}\n" + faults, sync);
}

// What the runs of one fault add up to: recovery times, failure classes, the worst lost_steps.
struct fault_tally {
  std::vector<double> recovery;
  std::map<std::string, std::int64_t> classes;
  std::int64_t lost = 0;

  void add(const fault_report& f) {
    recovery.insert(recovery.end(), f.recovery_ms.begin(), f.recovery_ms.end());
    for (const auto& [c, n] : f.failures_by_class) classes[c] += n;
    lost = std::max(lost, f.lost_steps);
  }
  // "crash=5,hang=1"
  std::string classes_text() const {
    std::string out;
    for (const auto& [c, n] : classes)
      out += (out.empty() ? "" : ",") + c + "=" + std::to_string(n);
    return out;
  }
};

struct process_run {
  std::optional<double> detect_ms;  // signal -> the job's failure line for a/0
  job_report job;
};

// One run: at step `at` agent `a` gets `sig`; a stopped agent is killed once the job is over.
process_run run_with_signal(std::int64_t steps, std::int64_t at, int sig,
                            const runtime_options& base, const std::string& sync) {
  runtime_options opts = base;
  opts.agent_program = std::filesystem::read_symlink("/proc/self/exe").string();
  runtime rt(config::parse_config(process_config_yaml(steps, sync), "bench-faults.yaml"), opts);
  std::mutex mu;
  std::optional<pid_t> victim;
  std::optional<steady::time_point> signalled, failed;
  rt.on_log([&](const std::string& job, const std::string& line) {
    std::lock_guard<std::mutex> lock(mu);
    const auto pid_at = line.rfind("pid ");
    if (job == "agents" && line.rfind("joined: agent a ", 0) == 0 && pid_at != std::string::npos)
      victim = static_cast<pid_t>(std::stol(line.substr(pid_at + 4)));
    if (job == "faults" && signalled && !failed && line.find("failure: worker a/0") == 0)
      failed = steady::now();
  });
  rt.on_metrics([&](const live_metrics& m) {
    std::lock_guard<std::mutex> lock(mu);
    if (m.step < at || signalled || !victim) return;
    signalled = steady::now();
    ::kill(*victim, sig);
  });
  auto report = rt.run();
  {
    std::lock_guard<std::mutex> lock(mu);
    if (victim) ::kill(*victim, SIGKILL);  // a stopped agent must not outlive the bench
  }
  if (report.jobs.size() != 1 || report.jobs[0].status != job_status::completed)
    throw runtime_failure("bench faults: job did not complete: " +
                          (report.jobs.empty() ? std::string("no job") : report.jobs[0].error));
  process_run out;
  out.job = report.jobs[0];
  std::lock_guard<std::mutex> lock(mu);
  if (signalled && failed)
    out.detect_ms = std::chrono::duration<double, std::milli>(*failed - *signalled).count();
  return out;
}

// --processes, partition: group `a`'s agent runs in network namespace b, joined to this process
// (moved into namespace a for the run) over a veth pair; at step `at` nftables drops all of b's
// packets, and the rule goes once the job is over. Steps `at` and `at` + 1 each wait 0.3 s for
// solo (below the 0.5 s hang floor, so nobody is declared hung for it): without that a short job
// could end before the rule was in place, and the run would measure nothing.

process_run run_with_partition(std::int64_t steps, std::int64_t at, const runtime_options& base,
                               const netns_pair& net, const std::string& sync) {
  std::optional<netns_pair::in_a> in_a;
  if (!net.enter_a(in_a)) throw runtime_failure("bench faults: cannot enter namespace a");
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string token = "bench-faults-partition";
  runtime_options opts = base;
  opts.agent_program = self;
  opts.listen = net.control() + ":0";
  opts.join_token = token;
  runtime rt(
      config::parse_config(process_config_yaml(steps, sync, "agent", at, 0.3), "bench-faults.yaml"),
      opts);
  std::mutex mu;
  std::optional<child_process> agent;
  std::optional<steady::time_point> cut, failed;
  std::string error;  // the callbacks run on the runtime's threads: they must not throw
  rt.on_log([&](const std::string& job, const std::string& line) {
    std::lock_guard<std::mutex> lock(mu);
    const std::string listening = "listening for agents on ";
    if (job == "agents" && !agent && error.empty() && line.rfind(listening, 0) == 0) {
      try {
        agent.emplace(std::vector<std::string>{net.ip(), "netns", "exec", net.ns_b(), self, "agent",
                                               "--join", line.substr(listening.size()), "--group",
                                               "a", "--name", "far", "--token", token},
                      std::vector<std::string>{});
      } catch (const std::exception& e) {
        error = e.what();
      }
    }
    if (job == "faults" && cut && !failed && line.find("failure: worker a/0") == 0)
      failed = steady::now();
  });
  rt.on_metrics([&](const live_metrics& m) {
    std::lock_guard<std::mutex> lock(mu);
    if (m.step < at || cut || !error.empty()) return;
    if (net.drop_b(true))
      cut = steady::now();
    else
      error = "nftables refused the drop rule";
  });
  auto report = rt.run();
  std::lock_guard<std::mutex> lock(mu);
  if (cut) net.drop_b(false);
  if (agent) agent->stop(0);  // cut off, it may be rejoining a run that is over
  if (!error.empty()) throw runtime_failure("bench faults: partition: " + error);
  if (report.jobs.size() != 1 || report.jobs[0].status != job_status::completed)
    throw runtime_failure("bench faults: job did not complete: " +
                          (report.jobs.empty() ? std::string("no job") : report.jobs[0].error));
  process_run out;
  out.job = report.jobs[0];
  if (cut && failed)
    out.detect_ms = std::chrono::duration<double, std::milli>(*failed - *cut).count();
  return out;
}

int run_processes(long long runs, std::int64_t steps, std::int64_t at,
                  const std::vector<std::string>& kinds, const runtime_options& base,
                  const std::string& sync) {
  for (const auto& k : kinds)
    if (k != "kill" && k != "stop" && k != "partition")
      throw input_error("--classes with --processes: unknown fault '" + k +
                        "' (kill, stop or partition)");
  std::printf(
      "# troupe bench faults --processes: %lld runs per fault; agent `a` (a child process) gets "
      "the signal at step %lld of %lld; sync %s\n",
      runs, static_cast<long long>(at), static_cast<long long>(steps), sync.c_str());
  std::printf("%-8s %12s %14s %-20s %10s %10s\n", "fault", "detect_ms", "recovery_ms", "classes",
              "lost_steps", "detected");
  for (const auto& kind : kinds) {
    std::optional<netns_pair> net;
    if (kind == "partition") {
      net.emplace();
      if (!net->ok()) {
        std::printf(
            "%-8s skipped: cannot make network namespaces and nftables rules here (needs "
            "root or CAP_NET_ADMIN, iproute2 and nftables)\n",
            kind.c_str());
        continue;
      }
    }
    std::vector<double> detect;
    fault_tally tally;
    for (long long r = 0; r < runs; ++r) {
      const auto run =
          net ? run_with_partition(steps, at, base, *net, sync)
              : run_with_signal(steps, at, kind == "kill" ? SIGKILL : SIGSTOP, base, sync);
      if (run.detect_ms) detect.push_back(*run.detect_ms);
      tally.add(run.job.faults);
    }
    std::printf("%-8s %12.1f %14.1f %-20s %10lld %7zu/%lld\n", kind.c_str(), median(detect),
                median(tally.recovery), tally.classes_text().c_str(),
                static_cast<long long>(tally.lost), detect.size(), runs);
    std::fflush(stdout);
  }
  return exit_ok;
}

const flag_set flags{{"runs", "steps", "at", "classes", "log-dir", "sync"}, {"processes"}, {}};

int run(const std::vector<std::string>& argv) {
  const args a(argv, flags);
  a.no_positionals();
  const auto runs = a.get_int("runs", 5);
  const auto steps = a.get_int("steps", 120);
  const auto at = a.get_int("at", 50);
  if (runs < 1 || at < 1 || steps < at + 10)
    throw input_error("--runs >= 1, --at >= 1 and --steps >= --at + 10");
  const auto sync = sync_yaml(a.get_or("sync", "ps"));
  runtime_options opts;
  opts.log_dir = a.get_or("log-dir", "");
  opts.wait_seconds = 600;
  if (a.has("processes"))
    return run_processes(runs, steps, at, split_list(a.get_or("classes", "kill,stop,partition")),
                         opts, sync);
  const auto kinds = split_list(a.get_or("classes", "kill,hang,partition"));
  for (const auto& k : kinds) fault_spec(k, at);  // refuses an unknown one before any run

  std::printf("# troupe bench faults: %lld runs per fault at step %lld of %lld; sync %s\n",
              static_cast<long long>(runs), static_cast<long long>(at),
              static_cast<long long>(steps), sync.c_str());
  std::printf("%-32s %12s %14s %-20s %10s\n", "fault", "detect_ms", "recovery_ms", "classes",
              "lost_steps");
  for (const auto& kind : kinds) {
    std::vector<double> detect;
    fault_tally tally;
    for (long long r = 0; r < runs; ++r) {
      const auto run =
          run_one_job(thread_config_yaml(steps, fault_yaml(fault_spec(kind, at)), sync),
                      "bench-faults.yaml", opts, "bench faults");
      detect.insert(detect.end(), run.job.faults.detect_ms.begin(), run.job.faults.detect_ms.end());
      tally.add(run.job.faults);
    }
    std::printf("%-32s %12.1f %14.1f %-20s %10lld\n", fault_spec(kind, at).c_str(), median(detect),
                median(tally.recovery), tally.classes_text().c_str(),
                static_cast<long long>(tally.lost));
    std::fflush(stdout);
  }
  return exit_ok;
}

const command_registrar reg{
    {"bench faults", "time to detect and recover, per fault", usage, run, flags}};

}  // namespace
}  // namespace troupe::apps
