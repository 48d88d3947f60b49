// Checkpoints through the real binary: `kill -9` of the whole `troupe run`
// process mid-job, then `--resume`: the job completes and loses at most one checkpoint interval.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/checkpoint.hpp"
#include "tests/binary_support.hpp"

extern char** environ;
namespace fs = std::filesystem;
using troupe::testing::troupe_binary;

namespace {

fs::path scratch() {
  return troupe::testing::scratch_dir("troupe-resume-cli");
}

constexpr int every_steps = 20;
constexpr int max_steps = 3000;

std::string config(const fs::path& ckpt) {
  return "cluster:\n"
         "  groups:\n"
         "    - {name: cpu, device: cpu, count: 2, threads: 1, weight: 1}\n"
         "jobs:\n"
         "  - name: killme\n"
         "    model: {kind: mlp, hidden: [64]}\n"
         "    data: {dataset: synthetic, synthetic: {samples: 4096}}\n"
         "    optimizer: {kind: adam, lr: 0.001}\n"
         "    batch: 64\n"
         "    epochs: 100\n"
         "    max_steps: " +
         std::to_string(max_steps) +
         "\n"
         "    seed: 3\n"
         "    checkpoint: {dir: " +
         ckpt.string() + ", every_steps: " + std::to_string(every_steps) + "}\n";
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The last "step K/T" line of a job log: the steps the job had completed (the hub flushes
// every line, so a kill -9 loses none of them).
long long last_logged_step(const fs::path& log) {
  const std::string text = slurp(log);
  static const std::regex step_line(R"(\] step (\d+)/\d+ )");
  long long last = -1;
  for (std::sregex_iterator it(text.begin(), text.end(), step_line), end; it != end; ++it)
    last = std::stoll((*it)[1]);
  return last;
}

}  // namespace

TEST_CASE("kill -9 mid-job, then --resume: completes, losing at most one checkpoint interval") {
  REQUIRE_MESSAGE(fs::exists(troupe_binary()), "build the troupe target first");
  const auto dir = scratch();
  const auto ckpt = dir / "ckpt";
  const auto logs = dir / "logs";
  fs::remove_all(ckpt);
  fs::remove_all(logs);
  const auto cfg = dir / "killme.yaml";
  std::ofstream(cfg) << config(ckpt);

  // Start it in the background.
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, (dir / "first.out").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  const std::string bin = troupe_binary().string(), cfg_s = cfg.string(), logs_s = logs.string();
  // From step 60 on, every step of the first run waits 50 ms: it cannot end before the two
  // checkpoints (steps 20 and 40) are seen and it is killed, however the poller below is
  // scheduled. Faults are not part of a checkpoint's identity, so the resume runs at full speed.
  std::vector<char*> argv = {const_cast<char*>(bin.c_str()),
                             const_cast<char*>("run"),
                             const_cast<char*>(cfg_s.c_str()),
                             const_cast<char*>("--log-dir"),
                             const_cast<char*>(logs_s.c_str()),
                             const_cast<char*>("--quiet"),
                             const_cast<char*>("--inject"),
                             const_cast<char*>("delay:cpu/0+50@60-"),
                             nullptr};
  pid_t pid = -1;
  REQUIRE(posix_spawn(&pid, bin.c_str(), &fa, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&fa);

  // Wait (deadline 90 s) until two checkpoints exist, then kill -9 the whole process.
  const troupe::checkpoint_store store((ckpt / "killme").string(), 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  bool exited = false;
  while (store.list().size() < 2 && std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!exited) {
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status));
  }
  INFO("first run output: " << slurp(dir / "first.out"));
  REQUIRE_FALSE(exited);
  REQUIRE(store.list().size() >= 2);
  const long long killed_step = last_logged_step(logs / "killme.log");
  const long long newest = store.list().back().step;
  REQUIRE(killed_step > 0);
  REQUIRE(killed_step < max_steps);

  // Resume.
  const auto report = dir / "report.json";
  const std::string cmd = "timeout 300 " + bin + " run " + cfg_s + " --resume " + ckpt.string() +
                          " --log-dir " + logs_s + " --quiet --report " + report.string() + " > " +
                          (dir / "second.out").string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  INFO("resumed run output: " << slurp(dir / "second.out"));
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  nlohmann::json j;
  std::ifstream(report) >> j;
  const auto& job = j["jobs"][0];
  CHECK(job["status"] == "completed");
  CHECK(job["steps"] == max_steps);
  REQUIRE(job["checkpoints"]["resumed_from_step"].is_number());
  const long long resumed = job["checkpoints"]["resumed_from_step"].get<long long>();
  MESSAGE("killed after step " << killed_step << " (newest checkpoint file " << newest
                               << "); resumed from step " << resumed << "; lost "
                               << killed_step - resumed << " steps (interval " << every_steps
                               << ")");
  CHECK(resumed >= killed_step - every_steps);
  CHECK(resumed <= killed_step);
  CHECK(slurp(dir / "second.out").find("resumed from step " + std::to_string(resumed)) !=
        std::string::npos);
  fs::remove_all(dir);
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
  CHECK(slurp(dir / "nores.out").find("--resume") != std::string::npos);
  fs::remove_all(dir);
}
