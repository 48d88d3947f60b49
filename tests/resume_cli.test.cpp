// Checkpoints through the real binary: `kill -9` of the whole `troupe run`
// process mid-job, then `--resume`: the job completes and loses at most one checkpoint interval.
// Also with groups that compute in child agents (`process: separate`): the agents of the killed
// control process exit by themselves (--parent, PR_SET_PDEATHSIG), and the resumed run starts
// agents of its own.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/checkpoint.hpp"
#include "tests/binary_support.hpp"
#include "tests/process_support.hpp"

namespace fs = std::filesystem;
using troupe::testing::read_file;
using troupe::testing::troupe_binary;

namespace {

fs::path scratch() {
  return troupe::testing::scratch_dir("troupe-resume-cli");
}

constexpr int every_steps = 20;
constexpr int max_steps = 3000;

// The cluster of the first test: one in-process group of two cpu devices.
const char* const local_groups =
    "    - {name: cpu, device: cpu, count: 2, threads: 1, weight: 1}\n";

std::string config(const fs::path& ckpt, const std::string& job = "killme",
                   const std::string& groups = local_groups, const std::string& sync = "",
                   int steps = max_steps, const std::string& optimizer = "{kind: adam, lr: 0.001}",
                   bool deterministic = false) {
  return "cluster:\n"
         "  groups:\n" +
         groups +
         "jobs:\n"
         "  - name: " +
         job +
         "\n"
         "    model: {kind: mlp, hidden: [64]}\n"
         "    data: {dataset: synthetic, synthetic: {samples: 4096}}\n"
         "    optimizer: " +
         optimizer +
         "\n"
         "    batch: 64\n"
         "    epochs: 100\n"
         "    max_steps: " +
         std::to_string(steps) + "\n" + (sync.empty() ? "" : "    sync: " + sync + "\n") +
         "    seed: 3\n" + (deterministic ? "    deterministic: true\n" : "") +
         "    checkpoint: {dir: " + ckpt.string() +
         ", every_steps: " + std::to_string(every_steps) + "}\n";
}

// The last "step K/T" line of a job log: the steps the job had completed (the hub flushes
// every line, so a kill -9 loses none of them).
long long last_logged_step(const fs::path& log) {
  const std::string text = read_file(log);
  static const std::regex step_line(R"(\] step (\d+)/\d+ )");
  long long last = -1;
  for (std::sregex_iterator it(text.begin(), text.end(), step_line), end; it != end; ++it)
    last = std::stoll((*it)[1]);
  return last;
}

// A config whose job is killed mid-run and resumed.
struct kill_case {
  std::string job;     // the job's name, and the sub-directory of the scratch dir it runs in
  std::string groups;  // the cluster's groups
  std::string sync;    // the job's sync map; "" for the default
  std::string slowed;  // the worker the first run slows down from step 60 on
  int steps = max_steps;
  int agents = 0;  // child agents of the control process (process: separate groups)
  // SIGKILL: nothing of the run survives but its checkpoints. SIGTERM: the run stops at the
  // next step boundary, writes a checkpoint there and exits 143; nothing is lost.
  int signal = SIGKILL;
  std::string optimizer = "{kind: adam, lr: 0.001}";
  // Deterministic, and the resumed run's fingerprint must be that of a run nothing stopped.
  bool exact = false;
};

// Two cpu groups, each computing in a child agent of `troupe run`.
const char* const separate_groups =
    "    - {name: a, device: cpu, count: 1, threads: 1, weight: 1, process: separate}\n"
    "    - {name: b, device: cpu, count: 1, threads: 1, weight: 1, process: separate}\n";

// The pids of the agents the control process saw join, from its "[agents] joined: agent NAME
// (group ... pid N)" lines.
std::vector<pid_t> joined_agents(const std::string& output) {
  static const std::regex joined(R"(\[agents\] joined: agent \S+ \(group [^\n]* pid (\d+)\))");
  std::vector<pid_t> pids;
  for (std::sregex_iterator it(output.begin(), output.end(), joined), end; it != end; ++it)
    pids.push_back(static_cast<pid_t>(std::stol((*it)[1])));
  return pids;
}

// Whether `pid` has exited. An orphan is reaped by init; a zombie that no one reaps yet (init
// here may not be a real init) has exited too.
bool exited(pid_t pid) {
  if (::kill(pid, 0) != 0) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');  // "PID (COMM) STATE ...": COMM may hold anything
  return close == std::string::npos || close + 2 >= text.size() || text[close + 2] == 'Z' ||
         text[close + 2] == 'X';
}

// Starts `troupe run` on the case's config in the background, kills it with SIGKILL once two
// checkpoints exist, checks that its agents (if any) exit by themselves, then resumes with
// --resume: the job completes and loses at most one checkpoint interval.
void kill_then_resume(const kill_case& k) {
  const auto dir = scratch() / k.job;
  const auto ckpt = dir / "ckpt";
  const auto logs = dir / "logs";
  fs::remove_all(dir);
  fs::create_directories(dir);
  // Removes the case's files however it ends, and the scratch dir once it is empty.
  struct remove_on_exit {
    fs::path dir;
    ~remove_on_exit() {
      std::error_code ec;
      fs::remove_all(dir, ec);
      fs::remove(dir.parent_path(), ec);
    }
  } cleanup{dir};
  const auto cfg = dir / (k.job + ".yaml");
  std::ofstream(cfg) << config(ckpt, k.job, k.groups, k.sync, k.steps, k.optimizer, k.exact);

  // Start it in the background (DIR/first.out and DIR/first.err).
  // From step 60 on, every step of the first run waits 50 ms: it cannot end before the two
  // checkpoints (steps 20 and 40) are seen and it is killed, however the poller below is
  // scheduled. Faults are not part of a checkpoint's identity, so the resume runs at full speed.
  // With agents, not --quiet: their pids come from its "[agents] joined" lines.
  const std::string bin = troupe_binary().string(), cfg_s = cfg.string(), logs_s = logs.string();
  std::vector<std::string> args = {"run",  cfg_s,      "--log-dir",
                                   logs_s, "--inject", "delay:" + k.slowed + "+50@60-"};
  if (k.agents == 0) args.push_back("--quiet");
  troupe::testing::troupe_process first(dir, "first", args);
  const auto output = [&] { return first.out() + first.err(); };

  // Wait until two checkpoints exist and the agents' joins are logged, then signal the whole
  // process.
  const troupe::checkpoint_store store((ckpt / k.job).string(), 0);
  bool exited_early = false;
  troupe::testing::wait_until(90, [&] {
    exited_early = first.wait_for_exit(0).has_value();
    return exited_early ||
           (store.list().size() >= 2 && (k.agents == 0 || joined_agents(output()).size() >=
                                                              static_cast<std::size_t>(k.agents)));
  });
  // The agents run while their control process does (the pids are theirs).
  const auto agents = joined_agents(output());
  for (const pid_t a : agents) CHECK_FALSE(exited(a));
  if (!exited_early) {
    first.kill(k.signal);
    const auto code = first.wait_for_exit(300);  // a deadline for a hang, not a speed check
    REQUIRE_MESSAGE(code.has_value(), "troupe run did not stop after signal " << k.signal);
    if (k.signal == SIGKILL) {
      CHECK(*code == -1);  // killed by the signal
    } else {
      CHECK(*code == 128 + k.signal);
      CHECK(output().find("finishing the step in flight") != std::string::npos);
      CHECK(read_file(logs / (k.job + ".log")).find("interrupted at step") != std::string::npos);
    }
  }

  // Its agents were started with --parent: they die with it, by themselves (deadline 20 s; a
  // lost control process would otherwise keep them rejoining for their 30 s join timeout).
  std::vector<pid_t> alive;
  if (k.agents > 0 && !exited_early) {
    const auto killed_at = std::chrono::steady_clock::now();
    troupe::testing::wait_until(20, [&] {
      alive.clear();
      for (const pid_t a : agents)
        if (!exited(a)) alive.push_back(a);
      return alive.empty();
    });
    for (const pid_t a : alive) ::kill(a, SIGKILL);  // leave nothing behind, whatever happened
    MESSAGE(
        k.job << ": " << agents.size() - alive.size() << " of " << agents.size() << " agents gone "
              << std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count()
              << " s after the kill");
  }
  INFO("first run output: " << output());
  REQUIRE_FALSE(exited_early);
  CHECK(agents.size() == static_cast<std::size_t>(k.agents));
  CHECK(alive.empty());
  REQUIRE(store.list().size() >= 2);
  const long long killed_step = last_logged_step(logs / (k.job + ".log"));
  const long long newest = store.list().back().step;
  REQUIRE(killed_step > 0);
  REQUIRE(killed_step < k.steps);

  // Resume.
  const auto report = dir / "report.json";
  const std::string cmd = "timeout 300 " + bin + " run " + cfg_s + " --resume " + ckpt.string() +
                          " --log-dir " + logs_s + " --quiet --report " + report.string() + " > " +
                          (dir / "second.out").string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  INFO("resumed run output: " << read_file(dir / "second.out"));
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  nlohmann::json j;
  std::ifstream(report) >> j;
  const auto& job = j["jobs"][0];
  CHECK(job["status"] == "completed");
  CHECK(job["steps"] == k.steps);
  REQUIRE(job["checkpoints"]["resumed_from_step"].is_number());
  const long long resumed = job["checkpoints"]["resumed_from_step"].get<long long>();
  MESSAGE(k.job << ": killed after step " << killed_step << " (newest checkpoint file " << newest
                << "); resumed from step " << resumed << "; lost " << killed_step - resumed
                << " steps (interval " << every_steps << ")");
  CHECK(resumed >= killed_step - every_steps);
  CHECK(resumed <= killed_step);
  if (k.signal != SIGKILL) CHECK(resumed == killed_step);  // its last boundary's checkpoint
  CHECK(read_file(dir / "second.out").find("resumed from step " + std::to_string(resumed)) !=
        std::string::npos);
  if (!k.exact) return;
  // The same config from the start, uninterrupted (its own checkpoint directory).
  const auto whole_cfg = dir / "whole.yaml";
  std::ofstream(whole_cfg) << config(dir / "whole-ckpt", k.job, k.groups, k.sync, k.steps,
                                     k.optimizer, k.exact);
  const auto whole_report = dir / "whole.json";
  const std::string whole = "timeout 300 " + bin + " run " + whole_cfg.string() + " --log-dir " +
                            (dir / "whole-logs").string() + " --quiet --report " +
                            whole_report.string() + " > " + (dir / "whole.out").string() + " 2>&1";
  REQUIRE(std::system(whole.c_str()) == 0);
  nlohmann::json w;
  std::ifstream(whole_report) >> w;
  MESSAGE(k.job << ": resumed " << job["params"]["fnv1a64"] << ", uninterrupted "
                << w["jobs"][0]["params"]["fnv1a64"]);
  CHECK(job["params"]["fnv1a64"] == w["jobs"][0]["params"]["fnv1a64"]);
}

}  // namespace

TEST_CASE("kill -9 mid-job, then --resume: completes, losing at most one checkpoint interval") {
  kill_then_resume({"killme", local_groups, "", "cpu/0", max_steps, 0});
}

TEST_CASE(
    "kill -9 of a control process whose groups compute in child agents: the agents exit by "
    "themselves, and --resume completes, losing at most one checkpoint interval") {
  for (const std::string mode : {"ps", "allreduce"}) {
    CAPTURE(mode);
    kill_then_resume({"killsep-" + mode, separate_groups, "{mode: " + mode + "}", "a/0", 600, 2});
  }
}

TEST_CASE(
    "kill -9 of a run with the distributed optimizer form: --resume ends with the uninterrupted "
    "run's fingerprint") {
  kill_case k{"killdist", local_groups, "{mode: allreduce}", "cpu/0", max_steps, 0};
  k.optimizer = "{kind: max-adabelief, lr: 0.001, form: distributed}";
  k.exact = true;
  kill_then_resume(k);
}

TEST_CASE(
    "SIGTERM mid-job: the step in flight ends, a checkpoint is written there, exit 143; "
    "--resume loses no step") {
  kill_case k{"termme", local_groups, "", "cpu/0", max_steps, 0};
  k.signal = SIGTERM;
  kill_then_resume(k);
  // With child agents too: they leave on the run's bye.
  kill_case sep{"termsep", separate_groups, "{mode: allreduce}", "a/0", 600, 2};
  sep.signal = SIGTERM;
  kill_then_resume(sep);
}

TEST_CASE("--resume of a directory that does not exist exits 2 naming the flag") {
  const auto dir = scratch();
  const auto cfg = dir / "nores.yaml";
  std::ofstream(cfg) << config(dir / "ck");
  const std::string cmd = "timeout 60 " + troupe_binary().string() + " run " + cfg.string() +
                          " --resume " + (dir / "nope").string() + " > " +
                          (dir / "nores.out").string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);
  CHECK(read_file(dir / "nores.out").find("--resume") != std::string::npos);
  fs::remove_all(dir);
}
