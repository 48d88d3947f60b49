// `troupe bench chaos CONFIG --rate R --kinds kill,stop,partition --seconds S`: faults that keep
// coming. Runs the config's one job twice per run, without faults and then with them: while the
// chaotic one trains, the bench kills (SIGKILL), stops (SIGSTOP for 0.5-3 s) and partitions (a
// silent cut for 0.5-3 s) the job's agent processes at random, R faults a minute for S seconds.
// Prints per run what landed and what the job made of it: goodput (fault-free wall time over
// chaotic wall time), lost_steps, samples counted twice or never (the job's sample ledger, which
// counts what applied steps summed), the relative L2 distance to the fault-free model and
// whether the fnv1a64 fingerprints match; then the medians.
//
// The agents are the config's `process: separate` groups (child agents the run starts and
// starts again when they die). A partition needs a network namespace: the first separate
// group's agent runs in one of the bench's own (apps/netns_pair.hpp), the control process and
// the other agents in the other, joined by a veth pair with no default route, and a cut is an
// nftables rule that drops every packet of the first namespace.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include "actors/runtime.hpp"
#include "apps/args.hpp"
#include "apps/bench_chaos_control.hpp"
#include "apps/command.hpp"
#include "apps/netns_pair.hpp"
#include "core/clock.hpp"
#include "core/config_load.hpp"
#include "core/error.hpp"
#include "core/median.hpp"

namespace troupe::apps {
namespace {

const char* usage =
    "usage: troupe bench chaos CONFIG [--rate 30] [--kinds kill,stop,partition] [--seconds 60]\n"
    "                          [--runs 1] [--seed 1] [--set PATH=VALUE ...] [--log-dir DIR]\n\n"
    "Runs CONFIG's one job without faults, then with faults that keep coming: --rate faults a\n"
    "minute (exponential gaps, from --seed) for --seconds or until the job ends, each a kind\n"
    "from --kinds on a random agent of the job's `process: separate` groups:\n"
    "  kill       SIGKILL (the run starts the child agent again)\n"
    "  stop       SIGSTOP for a random 0.5-3 s, then SIGCONT\n"
    "  partition  every packet of the first separate group's agent dropped for 0.5-3 s; that\n"
    "             agent runs in a network namespace of the bench's own (needs root or\n"
    "             CAP_NET_ADMIN, iproute2 and nftables)\n"
    "  control    the control process itself (alone, not with the kinds above): the job runs as\n"
    "             a child `troupe run` with checkpoints (every 25 steps unless --set gives\n"
    "             jobs.0.checkpoint.every_steps), killed with its agents (SIGKILL to its process\n"
    "             group) and started again (troupe run --resume) until a run completes; the table\n"
    "             then gives the kills, goodput, the steps trained again, and the sample\n"
    "             ledger's verdict over every run of the chain\n"
    "A fault whose kind no agent can take then (none joined, the agent stopped or cut already,\n"
    "one killed 4 times in the last minute: the run restarts a child agent 5 times a minute)\n"
    "is drawn but does not land.\n"
    "Prints per run the faults drawn and landed, the job's failures, goodput (fault-free wall time "
    "/\n"
    "chaotic wall time), lost_steps, samples counted twice or never in a pass (the job's sample\n"
    "ledger), the relative L2 distance to the fault-free model and whether the fnv1a64\n"
    "fingerprints match; then the medians. --runs pairs of runs; --set as for `troupe run`.";

const std::vector<std::string> known_kinds = {"kill", "stop", "partition", "control"};

// The one job's config, checked for what the bench needs: its separate groups, the first of
// which is the partition's target.
struct chaos_config {
  config::run_config run;
  std::vector<std::string> separate;  // group names
};

chaos_config load(const chaos_options& o) {
  chaos_config c{config::load_config(o.config, o.sets), {}};
  if (c.run.jobs.size() != 1)
    throw input_error(o.config + ": bench chaos runs a config of one job, this one has " +
                      std::to_string(c.run.jobs.size()));
  for (const auto& g : c.run.cluster.groups)
    if (g.process == group_process::separate) c.separate.push_back(g.name);
  if (c.separate.empty())
    throw input_error(o.config +
                      ": no group has `process: separate`; the faults hit the job's agents");
  return c;
}

// The agents the run has, from the registry's lines ("joined: agent NAME (... pid N)" and
// "lost agent NAME (... pid N) ..."), and what the bench did to each.
class agent_table {
 public:
  void on_line(const std::string& line) {
    const bool joined = line.rfind("joined: agent ", 0) == 0;
    const bool lost = line.rfind("lost agent ", 0) == 0;
    if (!joined && !lost) return;
    const auto from = joined ? 14 : 11;
    const auto name_end = line.find(' ', from);
    const auto pid_at = line.find("pid ");
    if (name_end == std::string::npos || pid_at == std::string::npos) return;
    const auto name = line.substr(from, name_end - from);
    const auto pid = static_cast<pid_t>(std::atol(line.c_str() + pid_at + 4));
    std::lock_guard<std::mutex> lock(mu_);
    if (joined)
      pids_[name] = pid;
    else if (pids_.count(name) && pids_[name] == pid)
      pids_.erase(name);
  }
  std::map<std::string, pid_t> live() const {
    std::lock_guard<std::mutex> lock(mu_);
    return pids_;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, pid_t> pids_;
};

struct chaos_tally {
  int drawn = 0;                      // faults the clock called for
  std::map<std::string, int> landed;  // by kind
  int total() const {
    int n = 0;
    for (const auto& [k, v] : landed) n += v;
    return n;
  }
};

// The faults, on a thread of their own from the job's first step until --seconds passed or the
// run ends. Stopped agents are continued and a cut is mended when their time is up, and all of
// them when the driver stops: no agent outlives the bench stopped.
class chaos_driver {
 public:
  chaos_driver(const chaos_options& o, const agent_table& agents, std::string partitionable,
               const netns_pair* net, std::uint64_t seed)
      : o_(o), agents_(agents), partitionable_(std::move(partitionable)), net_(net), rng_(seed) {}
  ~chaos_driver() { stop(); }

  void start() {
    std::lock_guard<std::mutex> lock(mu_);
    if (thread_.joinable() || stopped_) return;
    thread_ = std::thread([this] { loop(); });
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopped_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  chaos_tally tally() const {
    std::lock_guard<std::mutex> lock(mu_);
    return tally_;
  }

 private:
  using clock = std::chrono::steady_clock;
  struct pending {
    clock::time_point at;
    pid_t stopped = 0;  // SIGCONT it; 0: mend the cut
  };

  double uniform(double lo, double hi) { return std::uniform_real_distribution<>(lo, hi)(rng_); }

  void undo(const pending& p) {
    if (p.stopped > 0)
      ::kill(p.stopped, SIGCONT);
    else if (net_)
      net_->drop_b(false);
  }

  // One fault now: a kind from --kinds, on a random agent that can take it. Not counted when
  // nothing could take it (no agent joined, the partition's agent is cut already).
  void fire(std::vector<pending>& undo_at) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++tally_.drawn;
    }
    const auto live = agents_.live();
    const auto kind =
        o_.kinds[std::uniform_int_distribution<std::size_t>(0, o_.kinds.size() - 1)(rng_)];
    const auto held = [&](pid_t pid) {
      return std::any_of(undo_at.begin(), undo_at.end(),
                         [&](const pending& p) { return p.stopped == pid; });
    };
    std::vector<std::pair<std::string, pid_t>> targets;
    for (const auto& [name, pid] : live) {
      if (held(pid)) continue;
      if (kind == "partition" && name != partitionable_) continue;
      // The run starts a killed child agent again at most 5 times a minute: leave it be at 4.
      if (kind == "kill") {
        auto& k = kills_[name];
        k.erase(std::remove_if(k.begin(), k.end(),
                               [](clock::time_point t) {
                                 return clock::now() - t > std::chrono::seconds(60);
                               }),
                k.end());
        if (k.size() >= 4) continue;
      }
      targets.emplace_back(name, pid);
    }
    if (kind == "partition" &&
        std::any_of(undo_at.begin(), undo_at.end(), [](const pending& p) { return !p.stopped; }))
      targets.clear();
    if (targets.empty()) return;
    const auto [name, pid] =
        targets[std::uniform_int_distribution<std::size_t>(0, targets.size() - 1)(rng_)];
    const auto until = clock::now() + std::chrono::duration_cast<clock::duration>(
                                          std::chrono::duration<double>(uniform(0.5, 3.0)));
    bool landed = false;
    if (kind == "kill") {
      landed = ::kill(pid, SIGKILL) == 0;
      if (landed) kills_[name].push_back(clock::now());
    } else if (kind == "stop") {
      landed = ::kill(pid, SIGSTOP) == 0;
      if (landed) undo_at.push_back({until, pid});
    } else if (net_ && net_->drop_b(true)) {
      landed = true;
      undo_at.push_back({until, 0});
    }
    if (landed) {
      std::lock_guard<std::mutex> lock(mu_);
      ++tally_.landed[kind];
    }
  }

  void loop() {
    const auto end = clock::now() + std::chrono::duration_cast<clock::duration>(
                                        std::chrono::duration<double>(o_.seconds));
    std::exponential_distribution<> gap(o_.rate / 60.0);
    auto next = clock::now() + std::chrono::duration_cast<clock::duration>(
                                   std::chrono::duration<double>(gap(rng_)));
    std::vector<pending> undo_at;
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopped_) {
      auto wake = std::min(next, end);
      for (const auto& p : undo_at) wake = std::min(wake, p.at);
      cv_.wait_until(lock, wake, [this] { return stopped_; });
      if (stopped_) break;
      lock.unlock();
      const auto now = clock::now();
      for (auto it = undo_at.begin(); it != undo_at.end();)
        if (it->at <= now) {
          undo(*it);
          it = undo_at.erase(it);
        } else {
          ++it;
        }
      if (now >= next && now < end) {
        fire(undo_at);
        next = now + std::chrono::duration_cast<clock::duration>(
                         std::chrono::duration<double>(gap(rng_)));
      }
      lock.lock();
      if (now >= end && undo_at.empty()) break;
    }
    lock.unlock();
    for (const auto& p : undo_at) undo(p);
  }

  const chaos_options& o_;
  const agent_table& agents_;
  std::string partitionable_;
  const netns_pair* net_;
  std::mt19937_64 rng_;
  std::map<std::string, std::vector<clock::time_point>> kills_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopped_ = false;
  std::thread thread_;
  chaos_tally tally_;
};

// A script the run starts its child agents with: the partition's group goes into namespace b,
// joining the control process over the veth pair; the others run as they are.
std::string agent_wrapper(const std::string& dir, const std::string& self, const netns_pair& net,
                          const std::string& group) {
  const auto path = (std::filesystem::path(dir) / "agent.sh").string();
  std::ofstream f(path);
  f << "#!/bin/sh\n"
    << "case \" $* \" in\n"
    << "  *\" --group " << group << " \"*) exec " << netns_pair::ip() << " netns exec "
    << net.ns_b() << " " << self << " \"$@\" ;;\n"
    << "esac\n"
    << "exec " << self << " \"$@\"\n";
  f.close();
  if (!f) throw runtime_failure("bench chaos: cannot write " + path);
  ::chmod(path.c_str(), 0700);
  return path;
}

struct one_run {
  job_report job;
  chaos_tally tally;
};

// One run of the job: with faults when `chaotic`.
one_run run_job(const chaos_options& o, const chaos_config& c, bool chaotic, const netns_pair* net,
                const std::string& wrapper, std::uint64_t seed) {
  std::optional<netns_pair::in_a> in_a;
  if (net && !net->enter_a(in_a)) throw runtime_failure("bench chaos: cannot enter namespace a");
  runtime_options opts;
  opts.log_dir = o.log_dir;
  opts.wait_seconds = 3600;
  opts.agent_program =
      wrapper.empty() ? std::filesystem::read_symlink("/proc/self/exe").string() : wrapper;
  if (net) opts.listen = net->control() + ":0";
  runtime rt(c.run, opts);
  agent_table agents;
  chaos_driver driver(o, agents, c.separate.front(), net, seed);
  rt.on_log([&](const std::string& job, const std::string& line) {
    if (job == "agents") agents.on_line(line);
  });
  rt.on_metrics([&](const live_metrics&) {
    if (chaotic) driver.start();
  });
  run_report report;
  try {
    report = rt.run();
  } catch (...) {
    driver.stop();
    throw;
  }
  driver.stop();
  if (report.jobs.size() != 1 || report.jobs[0].status != job_status::completed)
    throw runtime_failure("bench chaos: job did not complete: " +
                          (report.jobs.empty() ? std::string("no job") : report.jobs[0].error));
  return {report.jobs[0], driver.tally()};
}

double relative_l2(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size() || b.empty()) return NAN;
  double diff = 0.0, ref = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    diff += d * d;
    ref += static_cast<double>(b[i]) * b[i];
  }
  return ref > 0 ? std::sqrt(diff / ref) : NAN;
}

const flag_set flags{{"rate", "kinds", "seconds", "runs", "seed", "set", "log-dir"}, {}, {"set"}};

int run(const std::vector<std::string>& argv) {
  const args a(argv, flags);
  if (a.positionals().size() != 1)
    throw input_error("expected one CONFIG (usage: troupe bench chaos CONFIG [--rate R] ...)");
  chaos_options o;
  o.config = a.positionals()[0];
  o.sets = a.all("set");
  o.rate = a.get_double("rate", 30);
  o.seconds = a.get_double("seconds", 60);
  o.runs = a.get_int("runs", 1);
  o.seed = static_cast<std::uint64_t>(a.get_int("seed", 1));
  o.log_dir = a.get_or("log-dir", "");
  o.kinds = split_list(a.get_or("kinds", "kill,stop,partition"));
  if (!(o.rate > 0) || !std::isfinite(o.rate))
    throw input_error("--rate must be a number of faults a minute > 0, got '" +
                      a.get_or("rate", "") + "'");
  if (!(o.seconds > 0) || !std::isfinite(o.seconds))
    throw input_error("--seconds must be > 0, got '" + a.get_or("seconds", "") + "'");
  if (o.runs < 1) throw input_error("--runs must be >= 1");
  if (o.kinds.empty()) throw input_error("--kinds: name at least one of kill, stop, partition");
  for (const auto& k : o.kinds)
    if (std::find(known_kinds.begin(), known_kinds.end(), k) == known_kinds.end())
      throw input_error("--kinds: unknown fault kind '" + k +
                        "' (kill, stop, partition, or control alone)");
  if (std::find(o.kinds.begin(), o.kinds.end(), "control") != o.kinds.end()) {
    if (o.kinds.size() != 1)
      throw input_error("--kinds: control (the control process) is a chaos of its own: not with " +
                        a.get_or("kinds", "") + "'s other kinds");
    return run_control_chaos(o);
  }
  const auto c = load(o);

  const bool partitions = std::find(o.kinds.begin(), o.kinds.end(), "partition") != o.kinds.end();
  std::optional<netns_pair> net;
  std::optional<std::filesystem::path> scratch;
  std::string wrapper;
  if (partitions) {
    net.emplace();
    if (!net->ok())
      throw input_error(
          "--kinds partition: cannot make network namespaces and nftables rules here (needs "
          "root or CAP_NET_ADMIN, iproute2 and nftables); leave partition out");
    scratch = std::filesystem::temp_directory_path() /
              ("troupe-bench-chaos-" + std::to_string(::getpid()));
    std::filesystem::create_directories(*scratch);
    wrapper = agent_wrapper(scratch->string(), std::filesystem::read_symlink("/proc/self/exe"),
                            *net, c.separate.front());
  }

  const auto& job = c.run.jobs[0];
  std::printf(
      "# troupe bench chaos %s: job %s, sync %s, deterministic %s; %g faults a minute of %s for "
      "%g s on the agents of %zu separate group(s)%s; %lld run(s), each against a fault-free run\n",
      o.config.c_str(), job.name.c_str(), name_of(job.sync.mode),
      job.deterministic ? "true" : "false", o.rate,
      a.get_or("kinds", "kill,stop,partition").c_str(), o.seconds, c.separate.size(),
      partitions ? (" (partitions cut " + c.separate.front() + "'s agent)").c_str() : "", o.runs);
  std::printf("%-4s %5s %6s %5s %5s %5s %8s %8s %8s %8s %6s %6s %6s %10s %5s\n", "run", "drawn",
              "faults", "kill", "stop", "part", "failures", "clean_s", "chaos_s", "goodput", "lost",
              "twice", "never", "rel_l2", "fnv");
  std::vector<double> goodputs, rels;
  int matches = 0;
  std::int64_t worst_lost = 0, twice = 0, never = 0;
  for (long long r = 0; r < o.runs; ++r) {
    const auto clean = run_job(o, c, false, net ? &*net : nullptr, wrapper, 0);
    const auto chaos =
        run_job(o, c, true, net ? &*net : nullptr, wrapper, o.seed + static_cast<std::uint64_t>(r));
    const auto& j = chaos.job;
    const double goodput = clean.job.wall_seconds / j.wall_seconds;
    const double rel = clean.job.final_params && j.final_params
                           ? relative_l2(*j.final_params, *clean.job.final_params)
                           : NAN;
    const bool match = j.params.fnv1a64 == clean.job.params.fnv1a64;
    const auto t = j.samples ? j.samples->counted_twice : -1;
    const auto n = j.samples ? j.samples->never_counted : -1;
    goodputs.push_back(goodput);
    rels.push_back(rel);
    matches += match ? 1 : 0;
    worst_lost = std::max(worst_lost, j.faults.lost_steps);
    twice += std::max<std::int64_t>(t, 0);
    never += std::max<std::int64_t>(n, 0);
    const auto landed = [&](const char* k) {
      const auto it = chaos.tally.landed.find(k);
      return it == chaos.tally.landed.end() ? 0 : it->second;
    };
    std::printf("%-4lld %5d %6d %5d %5d %5d %8lld %8.2f %8.2f %8.3f %6lld %6lld %6lld %10.3g %5s\n",
                r + 1, chaos.tally.drawn, chaos.tally.total(), landed("kill"), landed("stop"),
                landed("partition"), static_cast<long long>(j.faults.failures),
                clean.job.wall_seconds, j.wall_seconds, goodput,
                static_cast<long long>(j.faults.lost_steps), static_cast<long long>(t),
                static_cast<long long>(n), rel, match ? "same" : "other");
    std::fflush(stdout);
  }
  std::printf(
      "median goodput %.3f; worst lost_steps %lld; samples counted twice %lld, never %lld; "
      "median relative L2 %.3g; fnv1a64 the fault-free run's in %d of %lld\n",
      median(goodputs), static_cast<long long>(worst_lost), static_cast<long long>(twice),
      static_cast<long long>(never), median(rels), matches, o.runs);
  if (scratch) std::filesystem::remove_all(*scratch);
  return exit_ok;
}

const command_registrar reg{
    {"bench chaos", "faults that keep coming: goodput and exactness", usage, run, flags}};

}  // namespace
}  // namespace troupe::apps
