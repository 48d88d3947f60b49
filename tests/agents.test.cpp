// Agents in other processes joining a control process over CAF's middleman, on loopback: the
// built `troupe` binary on both sides, as a user runs it.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <doctest/doctest.h>

#include <fstream>
#include <memory>
#include <regex>

#include "tests/process_support.hpp"

using namespace troupe::testing;

namespace {

const std::filesystem::path scratch = scratch_dir("troupe-agents");

// A job of well under a second, so the run's length is the agents' business.
std::string write_config() {
  const auto path = scratch / "tiny.yaml";
  std::ofstream(path) << "cluster:\n  groups:\n    - {name: cpu, device: cpu, count: 1}\n"
                         "jobs:\n  - name: tiny\n"
                         "    data: {dataset: synthetic, synthetic: {kind: blobs, samples: 256}}\n"
                         "    model: {kind: mlp, hidden: [16]}\n"
                         "    optimizer: {kind: sgd, lr: 0.1}\n    batch: 32\n    epochs: 1\n";
  return path.string();
}

// `troupe run` listening on a free loopback port, waiting for `agents`; returns its port.
std::string start_run(troupe_process& run) {
  REQUIRE(run.wait_for_text("listening for agents on 127.0.0.1:", 30));
  std::smatch m;
  const std::string out = run.out();
  REQUIRE(
      std::regex_search(out, m, std::regex("listening for agents on (127\\.0\\.0\\.1:[0-9]+)")));
  return m[1];
}

std::vector<std::string> run_args(int agents) {
  return {"run",           write_config(),
          "--listen",      "127.0.0.1:0",
          "--wait-agents", std::to_string(agents),
          "--agent-wait",  "60",
          "--log-dir",     (scratch / "logs").string()};
}

std::vector<std::string> agent_args(const std::string& join, const std::string& name,
                                    const std::string& group) {
  return {"agent", "--join", join, "--name", name, "--group", group, "--join-timeout", "5"};
}

// An agent started and seen joined by `run`.
std::unique_ptr<troupe_process> joined(const troupe_process& run, const std::string& join,
                                       const std::string& name, const std::string& group) {
  auto p = std::make_unique<troupe_process>(scratch, name, agent_args(join, name, group));
  REQUIRE(run.wait_for_text("joined: agent " + name + " ", 30));
  return p;
}

// Junk on the control port: the control process closes that connection and carries on.
void send_junk(const std::string& address) {
  const int port = std::stoi(address.substr(address.rfind(':') + 1));
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  std::string junk(4096, '\0');
  for (std::size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<char>(i * 131 + 7);
  CHECK(::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL) > 0);
  ::close(fd);
}

}  // namespace

TEST_CASE("an agent joins a listening run, which then trains; the run's end releases it") {
  troupe_process run(scratch, "run1", run_args(1));
  const auto join = start_run(run);
  send_junk(join);
  troupe_process agent(scratch, "agent1", agent_args(join, "a1", "remote"));
  CHECK(run.wait_for_exit(120) == 0);
  CHECK(agent.wait_for_exit(30) == 0);
  CHECK(run.out().find("joined: agent a1 (group remote: 1 cpu device") != std::string::npos);
  CHECK(run.out().find("tiny: completed") != std::string::npos);
  CHECK(agent.err().find("joined " + join + " as member 1") != std::string::npos);
  CHECK(agent.err().find("the run at " + join + " is over") != std::string::npos);
}

TEST_CASE("a taken group is refused with exit 2; a killed agent is seen lost; others still join") {
  troupe_process run(scratch, "run2", run_args(2));
  const auto join = start_run(run);
  const auto first = joined(run, join, "a1", "g1");
  troupe_process twin(scratch, "twin", agent_args(join, "a2", "g1"));
  CHECK(twin.wait_for_exit(30) == 2);
  CHECK(twin.err().find("group 'g1' is hosted already by agent 'a1'") != std::string::npos);
  first->kill(SIGKILL);
  CHECK(run.wait_for_text("lost agent a1 (group g1", 30));
  // Nothing trained yet: the run still waits for its two agents, and g1 is free again.
  troupe_process second(scratch, "second", agent_args(join, "a3", "g1"));
  troupe_process third(scratch, "third", agent_args(join, "a4", "g4"));
  CHECK(run.wait_for_exit(120) == 0);
  CHECK(second.wait_for_exit(30) == 0);
  CHECK(third.wait_for_exit(30) == 0);
  CHECK(run.out().find("refused agent 'a2'") != std::string::npos);
}

TEST_CASE("a stopped agent is seen lost by the heartbeat") {
  troupe_process run(scratch, "run3", run_args(2));
  const auto join = start_run(run);
  const auto stopped = joined(run, join, "s1", "g1");
  stopped->kill(SIGSTOP);
  CHECK(run.wait_for_text("lost agent s1 (group g1", 30));
  stopped->kill(SIGKILL);
  troupe_process a(scratch, "a", agent_args(join, "a1", "g1"));
  troupe_process b(scratch, "b", agent_args(join, "b1", "g2"));
  CHECK(run.wait_for_exit(120) == 0);
}

TEST_CASE("an agent that loses its control process tries to rejoin, then gives up with exit 1") {
  troupe_process run(scratch, "run4", run_args(2));
  const auto join = start_run(run);
  const auto agent = joined(run, join, "o1", "g1");
  run.kill(SIGKILL);
  CHECK(agent->wait_for_exit(60) == 1);
  CHECK(agent->err().find("lost the control process at " + join) != std::string::npos);
  CHECK(agent->err().find("gave up: no join to " + join) != std::string::npos);
}

TEST_CASE("agent and listener flags: bad input exits 2 naming the flag") {
  struct row {
    std::vector<std::string> args;
    const char* says;
  };
  const row rows[] = {
      {{"agent", "--join", "nowhere"}, "--join: expected HOST:PORT"},
      {{"agent", "--join", "127.0.0.1:7000", "--device", "tpu"}, "--device must be cpu, sim or"},
      {{"agent", "--join", "127.0.0.1:7000", "--count", "0"}, "--count: expected a count"},
      {{"run", write_config(), "--listen", "127.0.0.1:99999"}, "--listen: expected HOST:PORT"},
      {{"run", write_config(), "--wait-agents", "2"}, "--wait-agents needs --listen"},
  };
  for (const auto& r : rows) {
    CAPTURE(r.says);
    troupe_process p(scratch, "bad", r.args);
    CHECK(p.wait_for_exit(30) == 2);
    CHECK(p.err().find(r.says) != std::string::npos);
  }
}
