// Groups that compute in other processes: three `process: separate` groups (two cpu, one sim
// three times slower) are three child agents of the runtime, real processes on loopback. The
// job must end with the parameters of the same job in one process, in every sync mode, and
// survive an agent killed with SIGKILL or stopped with SIGSTOP with no lost step.
#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "actors/runtime.hpp"
#include "collectives/shm/shm_link.hpp"
#include "core/child_process.hpp"
#include "core/config_load.hpp"
#include "tests/binary_support.hpp"
#include "tests/run_support.hpp"

namespace {

using troupe::testing::relative_l2;

// An MLP on Fashion-MNIST, 200 deterministic steps over three groups in `process`.
std::string config_text(const std::string& process, const std::string& sync,
                        const std::string& supervision = "{crash: migrate, hang: migrate}") {
  const std::string p = "process: " + process;
  return "cluster:\n  groups:\n"
         "    - {name: a, device: cpu, count: 1, threads: 1, weight: 1.0, " +
         p +
         "}\n"
         "    - {name: b, device: cpu, count: 1, threads: 1, weight: 1.0, " +
         p +
         "}\n"
         "    - {name: slow, device: sim, base: cpu, slowdown: 3, count: 1, threads: 1, "
         "weight: 0.34, " +
         p +
         "}\n"
         "jobs:\n"
         "  - name: remote\n"
         "    model: {kind: mlp, hidden: [64]}\n"
         "    data: {dataset: fashion-mnist, path: /usr/share/datasets/fashion-mnist,\n"
         "           preprocess: [normalize], split: weighted}\n"
         "    optimizer: {kind: adam, lr: 1.0e-3}\n"
         "    batch: 128\n"
         "    epochs: 1\n"
         "    max_steps: 200\n"
         "    sync: " +
         sync +
         "\n"
         "    supervision: " +
         supervision +
         "\n"
         "    seed: 7\n"
         "    deterministic: true\n";
}

// What a run left, and the pids of its agents (from the registry's "joined" lines).
struct run_result {
  troupe::job_report job;
  std::vector<troupe::agent_report> agents;
  std::vector<std::string> agent_log;  // the registry's and the child agents' lines
};

// Runs the config; at step `at` (if > 0) calls `hurt(pid of agent a)` once; at `at` < 0, when
// the job has its data (its "data:" line), as it asks the agents to host its workers. `watch`,
// if given, sees every line of the job's log and of the agents' as it comes.
run_result run(const std::string& yaml, std::int64_t at = 0,
               const std::function<void(pid_t)>& hurt = {},
               const std::function<void(const std::string&)>& watch = {}) {
  troupe::runtime_options opts;
  opts.wait_seconds = 120;
  opts.agent_wait_seconds = 30;
  opts.agent_program = troupe::testing::troupe_binary().string();
  troupe::runtime rt(troupe::config::parse_config(yaml, "remote.yaml"), opts);
  std::mutex mu;
  std::map<std::string, pid_t> pids;
  std::vector<std::string> log;
  std::atomic<bool> hurt_once{false};
  std::vector<std::string> job_log;  // the job's own lines, said if the run does not end
  rt.on_log([&](const std::string& job, const std::string& line) {
    // "joined: agent a (group a: ... pid 123)"
    if (job != "agents") {
      pid_t pid = 0;
      {
        std::lock_guard<std::mutex> lock(mu);
        job_log.push_back(line);
        if (at < 0 && line.rfind("data: ", 0) == 0 && pids.count("a")) pid = pids["a"];
      }
      if (pid > 0 && !hurt_once.exchange(true)) hurt(pid);
      if (watch) watch(line);
      return;
    }
    if (watch) watch(line);
    {
      std::lock_guard<std::mutex> lock(mu);
      log.push_back(line);
    }
    if (line.rfind("joined: agent ", 0) != 0) return;
    const auto name_end = line.find(' ', 14);
    const auto pid_at = line.rfind("pid ");
    if (name_end == std::string::npos || pid_at == std::string::npos) return;
    std::lock_guard<std::mutex> lock(mu);
    pids[line.substr(14, name_end - 14)] = static_cast<pid_t>(std::stol(line.substr(pid_at + 4)));
  });
  rt.on_metrics([&](const troupe::live_metrics& m) {
    if (at <= 0 || m.step < at || hurt_once.exchange(true)) return;
    pid_t pid = 0;
    {
      std::lock_guard<std::mutex> lock(mu);
      pid = pids.count("a") ? pids["a"] : 0;
    }
    if (pid > 0) hurt(pid);
  });
  troupe::run_report report;
  try {
    report = rt.run();
  } catch (const std::exception& e) {
    std::string tail;
    std::lock_guard<std::mutex> lock(mu);
    const auto from = job_log.size() > 60 ? job_log.size() - 60 : 0;
    for (auto i = from; i < job_log.size(); ++i) tail += "\n  " + job_log[i];
    FAIL(std::string(e.what()) << "; the job's last lines:" << tail);
  }
  REQUIRE(report.jobs.size() == 1);
  if (at != 0) CHECK(hurt_once.load());
  std::lock_guard<std::mutex> lock(mu);
  return {report.jobs[0], report.agents, log};
}

// "crash=1 hang=0": what a failing check prints of how the job classed its failures.
std::string classes_of(const troupe::job_report& j) {
  std::string out;
  for (const auto& [kind, n] : j.faults.failures_by_class)
    out += (out.empty() ? "" : " ") + kind + "=" + std::to_string(n);
  return out.empty() ? "none" : out;
}

void check_completed(const troupe::job_report& j) {
  INFO("error: " << j.error);
  INFO("failures by class: " << classes_of(j));
  INFO("events:" << troupe::testing::events_text(j));
  REQUIRE(j.status == troupe::job_status::completed);
  CHECK(j.steps == 200);
  CHECK(j.faults.lost_steps == 0);
  REQUIRE(j.samples);  // whatever was lost and recomputed, each sample counted once a pass
  CHECK(j.samples->counted_twice == 0);
  CHECK(j.samples->never_counted == 0);
  REQUIRE(j.final_params);
}

// The job saw the killed agent's worker fail: as a crash (the link or the agent's session
// closed), or as a hang where the step's deadline passed first. The runtime cannot tell a dead
// peer from a silent one until the operating system says so, and on a loaded host (the
// sanitizer build, two suites at once) the deadline, 0.5 s at least, sometimes comes first.
void check_crash_seen(const troupe::job_report& j) {
  INFO("failures by class: " << classes_of(j));
  const auto& by = j.faults.failures_by_class;
  const auto crashes = by.count("crash") ? by.at("crash") : 0;
  const auto hangs = by.count("hang") ? by.at("hang") : 0;
  CHECK(crashes + hangs >= 1);
  if (crashes == 0) MESSAGE("the step deadline saw the loss first (a loaded host?)");
}

const std::string ps_sync = "{mode: ps, ps_shards: 2}";

// The job holds at a step boundary until all three devices are members (elastic min_devices 3).
std::string with_min(std::string yaml) {
  const std::string at = "    seed: 7\n";
  yaml.insert(yaml.find(at), "    elastic: {min_devices: 3, max_devices: 3}\n");
  return yaml;
}

// The parameters of a fault case are those of the same job without the fault, bit for bit: the
// survivors computed the lost member's samples in whole blocks of the canonical reduction, whose
// sums the shards add in the same order as without the fault. The fault-free run is made once
// for every case.
// In allreduce the process ring adds the same blocks in the same order (block_allreduce), so its
// bits are ps's too.
void check_same_model(const troupe::job_report& hurt) {
  static const auto clean = run(config_text("separate", ps_sync)).job;
  REQUIRE(clean.final_params);
  const double d = relative_l2(*hurt.final_params, *clean.final_params);
  CAPTURE(d);
  INFO("events:" << troupe::testing::events_text(hurt));
  CHECK(d == 0);
  CHECK(hurt.params.fnv1a64 == clean.params.fnv1a64);
}

}  // namespace

TEST_CASE("three agents train the model of one process, in ps, allreduce and local mode") {
  for (const std::string sync :
       {"{mode: ps, ps_shards: 2}", "{mode: allreduce}", "{mode: local, period: 4}"}) {
    CAPTURE(sync);
    const auto here = run(config_text("local", sync));
    const auto apart = run(config_text("separate", sync));
    check_completed(here.job);
    check_completed(apart.job);
    CHECK(here.agents.empty());
    REQUIRE(apart.agents.size() == 3);
    if (apart.job.faults.failures == 0)
      for (const auto& a : apart.agents) CHECK(!a.lost_s);  // none lost during the run
    const double d = relative_l2(*apart.job.final_params, *here.job.final_params);
    CAPTURE(d);
    CHECK(d <= 1e-5);
    // ps and allreduce add the step's block sums in block order (the canonical reduction), so
    // the agents' blocks give the one process's bits; local SGD's replicas train on their own.
    const bool local = sync == "{mode: local, period: 4}";
    if (!local) CHECK(apart.job.params.fnv1a64 == here.job.params.fnv1a64);
    // Nothing crosses a process in the first run. In the second, per step, the rows go down
    // (784 floats and a label each). ps and local: each of the three agents also gets the
    // parameters and sends gradients back. allreduce: the replicas live in the agents (sent
    // once, before the first step, with an optimizer that has not stepped yet), and four ranks
    // (the control process and the agents) add the step's 4 block sums over shared memory
    // (ZeroMQ ipc where the kernel refuses cross-memory reads): each block's three quarters to
    // the segments' owners, each owner's segment to the 3 others (6 buffers of params floats
    // in all, as the ring's 2 x 3), and each rank's list of blocks (2 + k words) to the 3
    // others (288 bytes).
    const double params = static_cast<double>(here.job.final_params->size());
    const double rows = 128 * (784 * 4 + 4);
    CHECK(here.job.wire_bytes_per_step == 0);
    CHECK(!here.job.sync.process_ring);
    const bool ring = sync == "{mode: allreduce}";
    REQUIRE(apart.job.sync.process_ring.has_value() == ring);
    if (ring) {
      const auto& g = *apart.job.sync.process_ring;
      CHECK(g.ranks == 4);
      CHECK(g.transport == (troupe::collectives::cross_memory_attach_allowed() ? "shm" : "ipc"));
      CHECK(g.reductions == 200);
      CHECK(g.bytes == params * 4);
    }
    // On a loaded host a step can outlast the hang deadline (0.5 s at least), and the job then
    // moves a worker's share to the others: the figure is exact only for a run without that.
    // ps (deterministic: the canonical reduction) sends a gradient sum per block of 32 back,
    // 128 / 32 = 4 of them, where local sends one per agent.
    const double up = sync == ps_sync ? 128 / 32 : 3;
    const double want =
        ring ? rows + 3 * params * 4 / 200 + 6 * params * 4 + 288 : rows + (3 + up) * params * 4;
    // The segments' lengths differ by one float, and which rank holds which block moves the
    // ring's figure by up to 4 of them.
    const double slack = ring ? 16 : 0;
    if (apart.job.faults.failures == 0)
      CHECK(std::abs(apart.job.wire_bytes_per_step - want) <= slack + want * 1e-12);
    else
      MESSAGE("a worker failed (a loaded host?): " << apart.job.faults.failures);
  }
}

TEST_CASE("sync.codec topk on the process ring: a fifth of the bytes, still learning") {
  const auto plain = run(config_text("separate", "{mode: allreduce}")).job;
  const auto coded = run(config_text("separate", "{mode: allreduce, codec: 'topk:0.05'}")).job;
  check_completed(plain);
  check_completed(coded);
  REQUIRE(coded.sync.process_ring);
  const auto& g = *coded.sync.process_ring;
  CHECK(g.codec == "topk:0.05");
  CHECK(plain.sync.process_ring->codec == "none");
  // Each of the 4 ranks sends the 3 others' blobs of k = ceil(0.05 x params) (index, value)
  // pairs and a 24-byte head.
  const auto params = static_cast<std::uint64_t>(plain.final_params->size());
  const std::uint64_t k = (params * 5 + 99) / 100;
  CHECK(g.wire_bytes == 4 * 3 * (8 * k + 24));
  // The plain run is deterministic: the canonical reduction's 4 blocks over 4 ranks, six
  // buffers and the block lists (the first test case), give or take a float per block.
  const auto plain_wire = static_cast<double>(plain.sync.process_ring->wire_bytes);
  CHECK(std::abs(plain_wire - static_cast<double>(6 * params * 4 + 288)) <= 16);
  // Error feedback keeps it learning: a lossy step, but not a lost model (the uncompressed run
  // ends near 0.57 on this job, the untrained model near 2.3).
  CHECK(coded.test_loss < plain.test_loss * 1.25);
  CHECK(relative_l2(*coded.final_params, *plain.final_params) > 1e-4);  // the codec did act
}

TEST_CASE("an agent killed with SIGKILL at step 50: the job completes with no lost step") {
  const auto hurt =
      run(config_text("separate", ps_sync), 50, [](pid_t pid) { ::kill(pid, SIGKILL); });
  check_completed(hurt.job);
  check_crash_seen(hurt.job);
  check_same_model(hurt.job);
}

TEST_CASE("allreduce through the process ring: an agent killed with SIGKILL at step 50") {
  // The agents hold their gradients: a step that lost a member runs again over the survivors;
  // lost while the ring reduces, the survivors say whether they applied it first. Migrated away,
  // then restarted on the child agent started again (its replica brought to the members').
  for (const std::string supervision : {"{crash: migrate}", "{crash: restart}"}) {
    CAPTURE(supervision);
    const auto hurt = run(config_text("separate", "{mode: allreduce}", supervision), 50,
                          [](pid_t pid) { ::kill(pid, SIGKILL); });
    check_completed(hurt.job);
    check_crash_seen(hurt.job);
    REQUIRE(hurt.job.sync.process_ring);
    check_same_model(hurt.job);
  }
}

TEST_CASE("allreduce through the process ring: a worker killed as the ring reaches it, or after") {
  // An injected kill ends the agent member's worker in the control process at a chosen phase of
  // the step; its agent lives on, and the restarted worker is hosted on it again.
  for (const std::string phase : {"reduce", "apply"}) {
    CAPTURE(phase);
    std::string yaml = config_text("separate", "{mode: allreduce}", "{crash: restart}");
    yaml += "    faults: [{step: 50, action: kill, target: a/0, phase: " + phase + "}]\n";
    const auto hurt = run(yaml);
    check_completed(hurt.job);
    CHECK(hurt.job.faults.injected == 1);
    check_crash_seen(hurt.job);
    check_same_model(hurt.job);
  }
}

TEST_CASE("local SGD with agents: an agent killed with SIGKILL at step 50 loses no training") {
  // The replicas and optimizers live in the control process: the lost member's training since
  // the last average joins the next one, and the survivors compute its slices.
  const std::string sync = "{mode: local, period: 4}";
  const auto clean = run(config_text("separate", sync)).job;
  const auto hurt =
      run(config_text("separate", sync), 50, [](pid_t pid) { ::kill(pid, SIGKILL); }).job;
  check_completed(clean);
  check_completed(hurt);
  check_crash_seen(hurt);
  // Local SGD over two replicas from the loss on: close to the fault-free model, not equal
  // (0.05 measured here, where local SGD and synchronous SGD end 0.17 apart on this job).
  const double d = relative_l2(*hurt.final_params, *clean.final_params);
  CAPTURE(d);
  CHECK(d > 0);
  CHECK(d < 0.1);
  CHECK(hurt.test_loss == doctest::Approx(clean.test_loss).epsilon(0.05));
}

TEST_CASE("a killed child agent is started again, and its worker restarted on it") {
  const auto hurt = run(config_text("separate", ps_sync, "{crash: restart}"), 50,
                        [](pid_t pid) { ::kill(pid, SIGKILL); });
  check_completed(hurt.job);
  check_crash_seen(hurt.job);
  CHECK(hurt.job.faults.restarts >= 1);
  CHECK(hurt.job.faults.migrations == 0);
  const bool respawned =
      std::any_of(hurt.agent_log.begin(), hurt.agent_log.end(), [](const std::string& l) {
        return l.rfind("child agent a ended (killed by signal 9); started again", 0) == 0;
      });
  CHECK(respawned);
  check_same_model(hurt.job);
}

TEST_CASE("an agent stopped with SIGTERM at step 50 leaves at a step boundary, not as a failure") {
  // A generous hang floor: a loaded host must not turn a slow step into a failure here.
  const std::string supervision = "{crash: migrate, hang: migrate, hang_floor_s: 30}";
  for (const std::string& sync : {ps_sync, std::string("{mode: allreduce}")}) {
    CAPTURE(sync);
    const auto left = run(config_text("separate", sync, supervision), 50,
                          [](pid_t pid) { ::kill(pid, SIGTERM); });
    check_completed(left.job);
    INFO("events:" << troupe::testing::events_text(left.job));
    CHECK(left.job.faults.failures == 0);
    CHECK(left.job.faults.migrations == 0);
    CHECK(left.job.faults.recomputed_steps == 0);
    const auto it = std::find_if(left.job.events.begin(), left.job.events.end(),
                                 [](const troupe::job_event& e) { return e.kind == "left"; });
    REQUIRE(it != left.job.events.end());
    CHECK(it->detail.find(" a/0") != std::string::npos);
    CHECK(it->step >= 50);
    // Agent a computed nothing after it left; the others trained every step.
    for (const auto& w : left.job.workers)
      if (w.name == "a/0") CHECK(w.steps <= it->step);
    const auto said = std::find_if(left.agent_log.begin(), left.agent_log.end(), [](const auto& l) {
      return l.find("1 job(s) let its group go at a step boundary") != std::string::npos;
    });
    CHECK(said != left.agent_log.end());
    check_same_model(left.job);
  }
}

TEST_CASE("an agent stopped with SIGSTOP for 5 s at step 50: the job completes with no lost step") {
  for (const std::string& sync : {ps_sync, std::string("{mode: allreduce}")}) {
    CAPTURE(sync);
    std::thread resume;
    const auto hurt = run(config_text("separate", sync), 50, [&](pid_t pid) {
      ::kill(pid, SIGSTOP);
      resume = std::thread([pid] {
        std::this_thread::sleep_for(std::chrono::seconds(5));
        ::kill(pid, SIGCONT);
      });
    });
    if (resume.joinable()) resume.join();
    check_completed(hurt.job);
    CHECK(hurt.job.faults.failures >= 1);
    check_same_model(hurt.job);
  }
}

TEST_CASE(
    "an agent stopped with SIGSTOP, or killed, while the job starts: the job goes on by its "
    "policy") {
  const auto supervision = "{crash: migrate, hang: migrate, lost-group: migrate}";
  // Before, a worker lost while the job spawned or probed its workers failed the job at step 0
  // whatever its supervision said. Agent a is stopped as the job asks it to host a/0, and stays
  // stopped until the job has said a/0 failed (a minute at most): it never answers the request,
  // or, should its answer leave before the stop lands, a/0 is lost before its first step. Either
  // way it migrates and computes no step.
  std::mutex mu;
  std::condition_variable said;
  bool failed = false;
  std::thread resume;
  const auto stopped = run(
      config_text("separate", ps_sync, supervision), -1,
      [&](pid_t pid) {
        ::kill(pid, SIGSTOP);
        resume = std::thread([&, pid] {
          std::unique_lock<std::mutex> lock(mu);
          said.wait_for(lock, std::chrono::seconds(60), [&] { return failed; });
          ::kill(pid, SIGCONT);
        });
      },
      [&](const std::string& line) {
        if (line.find("worker a/0") == std::string::npos) return;
        std::lock_guard<std::mutex> lock(mu);
        failed = true;
        said.notify_all();
      });
  if (resume.joinable()) resume.join();
  check_completed(stopped.job);
  CHECK(stopped.job.faults.failures >= 1);
  CHECK(stopped.job.faults.migrations >= 1);
  REQUIRE(stopped.job.workers.size() == 3);
  CHECK(stopped.job.workers[0].steps == 0);
  // Killed then, the child agent is started again by the runtime, and the job goes on by its
  // policy (here a/0 migrates, or is hosted by the new agent if that joined before its spawn).
  const auto killed = run(config_text("separate", ps_sync, supervision), -1,
                          [](pid_t pid) { ::kill(pid, SIGKILL); });
  check_completed(killed.job);
}

namespace {

// Group `a` is a child agent; group `late` has no agent until step 20, when the test starts
// one. The job starts with min_devices 1 and takes `late` in at a step boundary. allreduce: the
// new rank takes a member's parameters and momentum there (the end-of-run check of the
// replicas' fnv fails the job if it did not). The join races the job's end: under the
// sanitizers on a loaded host a join once took more than 200 steps of 0.1 ms rows (its first
// TLS connection timed out and it tried again), so it starts at step 20 and rows take 0.3 ms,
// about 3.5 times the window (280 steps of about 19 ms of compute).
void check_elastic_join(const std::string& sync, const std::string& optimizer) {
  const std::string yaml =
      "cluster:\n  groups:\n"
      "    - {name: a, device: sim, slowdown: 1, row_seconds: 0.0003, weight: 1,"
      " process: separate}\n"
      "    - {name: late, device: sim, slowdown: 1, row_seconds: 0.0003, weight: 1,"
      " process: agent}\n"
      "jobs:\n"
      "  - name: grow\n"
      "    model: {kind: mlp, hidden: [32]}\n"
      "    data: {dataset: synthetic, synthetic: {kind: blobs, samples: 6400}}\n"
      "    optimizer: " +
      optimizer +
      "\n"
      "    batch: 128\n    epochs: 100\n    max_steps: 300\n"
      "    sync: " +
      sync +
      "\n"
      "    elastic: {min_devices: 1, max_devices: 2}\n"
      "    seed: 5\n    deterministic: true\n";
  troupe::runtime_options opts;
  opts.wait_seconds = 120;
  opts.agent_wait_seconds = 30;
  opts.listen = "127.0.0.1:0";
  opts.agent_program = troupe::testing::troupe_binary().string();
  troupe::runtime rt(troupe::config::parse_config(yaml, "elastic.yaml"), opts);
  std::mutex mu;
  std::unique_ptr<troupe::child_process> late;
  std::int64_t last_step = 0, joined_at = -1;
  rt.on_metrics([&](const troupe::live_metrics& m) {
    std::lock_guard<std::mutex> lock(mu);
    last_step = m.step;
    if (m.step < 20 || late) return;
    late = std::make_unique<troupe::child_process>(
        std::vector<std::string>{opts.agent_program, "agent", "--join",
                                 "127.0.0.1:" + std::to_string(rt.listen_port()), "--group", "late",
                                 "--name", "late", "--device", "sim", "--join-timeout", "30",
                                 "--parent", std::to_string(::getpid())},
        std::vector<std::string>{});
  });
  rt.on_log([&](const std::string& job, const std::string& line) {
    std::lock_guard<std::mutex> lock(mu);
    if (job == "agents" && line.rfind("joined: agent late ", 0) == 0) joined_at = last_step;
  });
  const auto report = rt.run();
  REQUIRE(report.jobs.size() == 1);
  const auto& j = report.jobs[0];
  INFO("error: " << j.error);
  REQUIRE(j.status == troupe::job_status::completed);
  CHECK(j.steps == 300);
  CHECK(j.faults.lost_steps == 0);
  REQUIRE(j.workers.size() == 2);
  CHECK(j.workers[0].first_step == 0);
  const auto& grown = j.workers[1];
  CHECK(grown.name == "late/0");
  CHECK(grown.samples > 0);
  {
    std::lock_guard<std::mutex> lock(mu);
    REQUIRE(late);
    CHECK(joined_at >= 20);
    CAPTURE(joined_at);
    CAPTURE(grown.first_step);
    // It computes only after it joined, and from then on in every step (unless a loaded host
    // made a step outlast the hang deadline).
    CHECK(grown.first_step > joined_at);
    if (j.faults.failures == 0) CHECK(grown.steps == 300 - grown.first_step);
    CHECK(late->stop(10.0) == 0);  // the run's end released it
  }
}

}  // namespace

TEST_CASE("an elastic job takes in an agent that joins while it runs") {
  check_elastic_join("{mode: ps}", "{kind: sgd, lr: 0.05}");
}

TEST_CASE("an elastic allreduce job brings the joining agent's replica to the members' state") {
  check_elastic_join("{mode: allreduce}", "{kind: momentum, lr: 0.05, momentum: 0.9}");
}

TEST_CASE("an elastic job below min_devices pauses until the restarted worker is back") {
  const auto hurt = run(with_min(config_text("separate", ps_sync, "{crash: restart}")), 50,
                        [](pid_t pid) { ::kill(pid, SIGKILL); });
  check_completed(hurt.job);
  CHECK(hurt.job.faults.restarts >= 1);
  // The survivors finish the step in flight; then the job holds until agent a is started again
  // and its worker rejoins, so every later step has all three devices.
  const auto& a = hurt.job.workers[0];
  CHECK(a.name == "a/0");
  CHECK(a.steps >= 199);  // every step but the one it died in (a restart may come back in time)
  check_same_model(hurt.job);
}

TEST_CASE(
    "a worker restarted on an agent stopped past the heartbeat is asked again on its return") {
  // Agent a is stopped at step 50 and continued as soon as the registry has lost it. Its worker
  // is declared hung and restarted where it is: the restart's request to host it went to the
  // stopped agent's session, which ended with it. The request goes again to the agent as it
  // rejoins; before, it waited out its 10 s and failed as a crash. With min_devices 3 the job
  // holds for a/0, so the restart always meets the job still running.
  std::atomic<pid_t> stopped{0};
  std::mutex mu;
  std::condition_variable said;
  bool continued = false;
  // If the registry never says it lost a (it should within the heartbeat), a is continued
  // after 30 s anyway, so that nothing stays stopped.
  std::thread fallback;
  const auto hurt = run(
      with_min(config_text("separate", ps_sync, "{crash: restart, hang: restart}")), 50,
      [&](pid_t pid) {
        stopped = pid;
        ::kill(pid, SIGSTOP);
        fallback = std::thread([&] {
          std::unique_lock<std::mutex> lock(mu);
          said.wait_for(lock, std::chrono::seconds(30), [&] { return continued; });
          if (const auto p = stopped.exchange(0); p > 0) ::kill(p, SIGCONT);
        });
      },
      [&](const std::string& line) {
        if (line.rfind("lost agent a ", 0) != 0) return;
        if (const auto p = stopped.exchange(0); p > 0) ::kill(p, SIGCONT);
        std::lock_guard<std::mutex> lock(mu);
        continued = true;
        said.notify_all();
      });
  {
    std::lock_guard<std::mutex> lock(mu);
    continued = true;
    said.notify_all();
  }
  if (fallback.joinable()) fallback.join();
  check_completed(hurt.job);
  INFO("events:" << troupe::testing::events_text(hurt.job));
  CHECK(hurt.job.faults.restarts >= 1);
  CHECK(hurt.job.faults.migrations == 0);
  for (const auto& e : hurt.job.events)
    CHECK(e.detail.find("did not answer a request to host") == std::string::npos);
  check_same_model(hurt.job);
}

TEST_CASE("an elastic job with the distributed optimizer form takes in a joining agent") {
  // The joining rank starts from a member's parameters and Max-AdaBelief moments; every replica
  // then applies the same update (the end-of-run check of the replicas' fnv holds).
  check_elastic_join("{mode: allreduce}", "{kind: max-adabelief, lr: 0.01, form: distributed}");
}
