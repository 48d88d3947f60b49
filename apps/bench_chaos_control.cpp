#include "apps/bench_chaos_control.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/child_process.hpp"
#include "core/clock.hpp"
#include "core/config_load.hpp"
#include "core/error.hpp"
#include "core/median.hpp"

namespace troupe::apps {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// What a finished run's report says of its one job.
struct final_job {
  std::string fnv;
  std::int64_t lost = 0;
  std::int64_t passes = 0, twice = 0, never = 0;  // this run and the runs before it
  bool audited = false;
};

final_job read_report(const fs::path& file) {
  nlohmann::json j;
  std::ifstream in(file);
  in >> j;
  const auto& job = j.at("jobs").at(0);
  if (job.at("status") != "completed")
    throw runtime_failure("bench chaos: the job ended " + job.at("status").get<std::string>() +
                          ": " + job.value("error", std::string()));
  final_job f;
  f.fnv = job.at("params").at("fnv1a64").get<std::string>();
  f.lost = job.at("faults").at("lost_steps").get<std::int64_t>();
  const auto& audit = job.at("sample_audit");
  if (audit.is_object()) {
    f.audited = true;
    const auto& e = audit.at("earlier");
    f.passes =
        audit.at("passes_checked").get<std::int64_t>() + e.at("passes_checked").get<std::int64_t>();
    f.twice =
        audit.at("counted_twice").get<std::int64_t>() + e.at("counted_twice").get<std::int64_t>();
    f.never =
        audit.at("never_counted").get<std::int64_t>() + e.at("never_counted").get<std::int64_t>();
  }
  return f;
}

// The steps a chain of runs trained again. The job's log holds every run, each after a marker
// line; a run that resumed from step R trains again every step from R to the furthest step an
// earlier run completed (a run killed before it logged anything adds nothing).
std::int64_t redone_steps(const std::string& log) {
  static const std::regex step_line(R"(\] step (\d+)/\d+ )");
  static const std::regex resumed(R"(resum\w* from \S+ \(step (\d+)\))");
  const std::string mark = "---- a new run of job ";
  std::vector<std::string> runs;
  std::size_t at = 0;
  for (std::size_t next; (next = log.find(mark, at + 1)) != std::string::npos; at = next)
    runs.push_back(log.substr(at, next - at));
  runs.push_back(log.substr(at));
  std::int64_t redone = 0, furthest = 0;
  for (const auto& run : runs) {
    std::smatch m;
    if (std::regex_search(run, m, resumed))
      redone += std::max<std::int64_t>(0, furthest - std::stoll(m[1]));
    for (std::sregex_iterator it(run.begin(), run.end(), step_line), end; it != end; ++it)
      furthest = std::max<std::int64_t>(furthest, std::stoll((*it)[1]));
  }
  return redone;
}

struct chain {
  final_job job;
  double wall = 0.0;
  int kills = 0;
  std::int64_t redone = 0;
};

// Runs the job as a child `troupe run`, killed at exponential gaps while `seconds` last (none
// when rate is 0) and resumed from its checkpoints until a run completes.
chain run_chain(const chaos_options& o, const std::string& self, const fs::path& dir,
                const std::string& job, double rate, std::uint64_t seed) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto ckpt = dir / "ckpt";
  const auto logs = dir / "logs";
  const auto report = dir / "report.json";
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(rate > 0 ? rate / 60.0 : 1.0);
  chain c;
  const auto t0 = steady::now();
  for (int attempt = 0;; ++attempt) {
    std::vector<std::string> argv{self,       "run",           o.config,    "--quiet",
                                  "--report", report.string(), "--log-dir", logs.string()};
    for (const auto& s : o.sets) argv.insert(argv.end(), {"--set", s});
    argv.insert(argv.end(), {"--set", "jobs.0.checkpoint.dir=" + ckpt.string()});
    bool has_interval = false;
    for (const auto& s : o.sets)
      has_interval = has_interval || s.rfind("jobs.0.checkpoint.every_steps=", 0) == 0;
    if (!has_interval)
      argv.insert(argv.end(),
                  {"--set", "jobs.0.checkpoint.every_steps=" + std::to_string(o.every_steps)});
    if (fs::exists(ckpt / job) && !fs::is_empty(ckpt / job))
      argv.insert(argv.end(), {"--resume", ckpt.string()});
    const auto out = dir / ("run-" + std::to_string(attempt) + ".out");
    child_options co;
    co.own_group = true;
    co.output = out.string();
    child_process run(argv, {}, co);
    const double kill_at = rate > 0 ? seconds_since(t0) + gap(rng) : INFINITY;
    bool killed = false;
    while (run.running()) {
      const double now = seconds_since(t0);
      if (now > 3600) {
        run.kill_group(SIGKILL);
        throw runtime_failure("bench chaos: the job did not end within an hour");
      }
      if (now >= kill_at && now < o.seconds) {
        run.kill_group(SIGKILL);
        killed = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (killed) {
      ++c.kills;
      continue;
    }
    const int st = run.status();
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
      throw runtime_failure("bench chaos: troupe run exited " +
                            std::to_string(WIFEXITED(st) ? WEXITSTATUS(st) : -1) + ": " +
                            slurp(out).substr(0, 2000));
    break;
  }
  c.wall = seconds_since(t0);
  c.job = read_report(report);
  c.redone = redone_steps(slurp(logs / (job + ".log")));
  return c;
}

}  // namespace

int run_control_chaos(const chaos_options& o) {
  const auto cfg = config::load_config(o.config, o.sets);
  if (cfg.jobs.size() != 1)
    throw input_error("bench chaos: " + o.config + " must have exactly one job (it has " +
                      std::to_string(cfg.jobs.size()) + ")");
  const auto& job = cfg.jobs[0];
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  const auto scratch =
      fs::temp_directory_path() / ("troupe-bench-chaos-control-" + std::to_string(::getpid()));
  const fs::path base = o.log_dir.empty() ? scratch : fs::path(o.log_dir);
  std::printf(
      "# troupe bench chaos %s --kinds control: job %s, sync %s, deterministic %s; %g kills a "
      "minute of the control process (SIGKILL to it and its agents, then --resume) for %g s; "
      "%lld run(s), each against a fault-free run\n",
      o.config.c_str(), job.name.c_str(), name_of(job.sync.mode),
      job.deterministic ? "true" : "false", o.rate, o.seconds, o.runs);
  std::printf("%-4s %6s %8s %8s %8s %7s %6s %6s %6s %7s %5s\n", "run", "kills", "clean_s",
              "chaos_s", "goodput", "redone", "lost", "twice", "never", "passes", "fnv");
  std::vector<double> goodputs;
  int matches = 0;
  std::int64_t twice = 0, never = 0, lost = 0;
  for (long long r = 0; r < o.runs; ++r) {
    const auto clean = run_chain(o, self, base / ("clean-" + std::to_string(r)), job.name, 0, 0);
    const auto chaos = run_chain(o, self, base / ("chaos-" + std::to_string(r)), job.name, o.rate,
                                 o.seed + static_cast<std::uint64_t>(r));
    const double goodput = clean.wall / chaos.wall;
    const bool match = chaos.job.fnv == clean.job.fnv;
    goodputs.push_back(goodput);
    matches += match ? 1 : 0;
    twice += chaos.job.twice;
    never += chaos.job.never;
    lost = std::max(lost, chaos.job.lost);
    std::printf("%-4lld %6d %8.2f %8.2f %8.3f %7lld %6lld %6lld %6lld %7lld %5s\n", r + 1,
                chaos.kills, clean.wall, chaos.wall, goodput, static_cast<long long>(chaos.redone),
                static_cast<long long>(chaos.job.lost), static_cast<long long>(chaos.job.twice),
                static_cast<long long>(chaos.job.never), static_cast<long long>(chaos.job.passes),
                match ? "same" : "other");
    std::fflush(stdout);
  }
  std::printf(
      "median goodput %.3f; worst lost_steps %lld; samples counted twice %lld, never %lld (every "
      "run of each chain); fnv1a64 the fault-free run's in %d of %lld\n",
      median(goodputs), static_cast<long long>(lost), static_cast<long long>(twice),
      static_cast<long long>(never), matches, o.runs);
  if (o.log_dir.empty()) fs::remove_all(scratch);
  return 0;
}

}  // namespace troupe::apps
