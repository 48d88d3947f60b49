#pragma once
// `troupe serve` in a test, as a user runs it: the built binary as the service over one state
// directory, its agents, and its clients (`troupe submit`, `status`, ...), on loopback. Every
// process is killed when its handle goes; the scratch directory goes at the test's exit.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <doctest/doctest.h>

#include <httplib.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tests/process_support.hpp"
#include "tests/tls_support.hpp"

namespace troupe::testing {

using json = nlohmann::json;

inline const std::filesystem::path& service_scratch() {
  static const std::filesystem::path dir = scratch_dir("troupe-service");
  return dir;
}

// Groups a1..a3 are agents' (sim devices of a fixed speed, so a job's length does not depend on
// the machine's load: 32 rows at 0.3 ms each, about 10 ms a step); s1 and s2 compute in the
// service's own process.
inline const char* cluster_yaml =
    "cluster:\n  groups:\n"
    "    - {name: a1, device: sim, base: cpu, slowdown: 1, row_seconds: 0.0003, count: 1, "
    "process: agent}\n"
    "    - {name: a2, device: sim, base: cpu, slowdown: 1, row_seconds: 0.0003, count: 1, "
    "process: agent}\n"
    "    - {name: a3, device: sim, base: cpu, slowdown: 1, row_seconds: 0.0003, count: 1, "
    "process: agent}\n"
    "    - {name: s1, device: sim, base: cpu, slowdown: 1, row_seconds: 0.0003, count: 1}\n"
    "    - {name: s2, device: sim, base: cpu, slowdown: 1, row_seconds: 0.0003, count: 1}\n";

// One job of a jobs-only file.
inline std::string job_yaml(const std::string& name, const std::string& groups, int steps,
                            const std::string& extra = "") {
  return "  - name: " + name + "\n    resources: [" + groups +
         "]\n    data: {dataset: synthetic, synthetic: {kind: blobs, samples: 512}}\n"
         "    model: {kind: mlp, hidden: [16]}\n    optimizer: {kind: sgd, lr: 0.05}\n"
         "    batch: 32\n    epochs: 1000\n    max_steps: " +
         std::to_string(steps) + "\n" + extra;
}

inline std::string write(const std::string& name, const std::string& text) {
  const auto path = service_scratch() / name;
  std::ofstream(path) << text;
  return path.string();
}

// The service over one state directory, started and killed as a user would.
class service {
 public:
  explicit service(const std::string& name)
      : name_(name),
        state_((service_scratch() / (name + "-state")).string()),
        listen_("127.0.0.1:" + std::to_string(free_port())),
        http_("127.0.0.1:" + std::to_string(free_port())) {}

  void start(const std::vector<std::string>& extra = {}) {
    ++starts_;
    // free_port() released its ports again, and another process may take one before serve
    // binds it (a client's ephemeral port): at the first start, new ones are tried. Later
    // starts keep theirs, which agents rejoin.
    for (int attempt = 0;; ++attempt) {
      std::vector<std::string> args = {"serve", "--state", state_, "--listen",
                                       listen_, "--http",  http_};
      args.insert(args.end(), extra.begin(), extra.end());
      if (starts_ == 1)
        args.insert(args.end(), {"--cluster", write(name_ + "-cluster.yaml", cluster_yaml)});
      serve_ = std::make_unique<troupe_process>(service_scratch(),
                                                name_ + "-serve" + std::to_string(starts_), args);
      const bool up = serve_->wait_for_text("troupe serve: API on https://", 60);
      if (!up && starts_ == 1 && attempt < 3 &&
          serve_->err().find("cannot listen there") != std::string::npos) {
        serve_->wait_for_exit(10);
        listen_ = "127.0.0.1:" + std::to_string(free_port());
        http_ = "127.0.0.1:" + std::to_string(free_port());
        continue;
      }
      INFO("serve's stderr: " << serve_->err());  // why it did not start, when it did not
      REQUIRE(up);
      return;
    }
  }
  troupe_process& process() { return *serve_; }
  const std::string& listen_address() const { return listen_; }
  const std::string& http_address() const { return http_; }
  std::string url() const { return "https://" + http_; }
  // The service's token and CA (made at its first start), as a client on this machine finds them.
  std::string token() const {
    std::ifstream in(std::filesystem::path(state_) / "token");
    std::string t;
    std::getline(in, t);
    return t;
  }
  std::string ca_path() const {
    return (std::filesystem::path(state_) / "tls" / "ca.crt").string();
  }
  // An HTTPS client of the API that checks the service's certificate and brings the token.
  std::unique_ptr<httplib::Client> http_client() const {
    auto c = std::make_unique<httplib::Client>(url());
    c->set_ca_cert_path(ca_path());
    c->enable_server_certificate_verification(true);
    c->set_bearer_token_auth(token());
    c->set_read_timeout(30, 0);
    return c;
  }
  int http_port() const { return std::stoi(http_.substr(http_.rfind(':') + 1)); }
  const std::string& state_dir() const { return state_; }

  // An agent of `group`, joined (the service logs it).
  std::unique_ptr<troupe_process> agent(const std::string& group,
                                        const std::vector<std::string>& extra = {}) {
    const auto joins = count_joins(group);
    std::vector<std::string> args = {"agent",  "--join",  listen_,    "--group", group,
                                     "--name", group,     "--device", "sim",     "--join-timeout",
                                     "120",    "--state", state_};
    args.insert(args.end(), extra.begin(), extra.end());
    auto p = std::make_unique<troupe_process>(service_scratch(), name_ + "-agent-" + group, args);
    REQUIRE(serve_->wait_for_text("joined: agent " + group + " ", 60, joins + 1));
    return p;
  }

  // `troupe CLIENT ARGS --server URL`: its exit code and stdout.
  std::pair<int, std::string> client(std::vector<std::string> args) {
    args.insert(args.end(), {"--server", url(), "--state", state_});
    troupe_process p(service_scratch(), name_ + "-client", args);
    const auto code = p.wait_for_exit(60);
    REQUIRE(code.has_value());
    last_err_ = p.err();
    return {*code, p.out()};
  }
  std::string last_err() const { return last_err_; }

  std::vector<std::string> submit(const std::string& file_text) {
    static int n = 0;
    const auto [code, out] =
        client({"submit", write(name_ + "-jobs" + std::to_string(++n) + ".yaml", file_text)});
    REQUIRE_MESSAGE(code == 0, last_err_);
    std::vector<std::string> ids;
    std::istringstream lines(out);
    for (std::string id; std::getline(lines, id);) ids.push_back(id);
    return ids;
  }
  json status() {
    const auto [code, out] = client({"status", "--json"});
    REQUIRE_MESSAGE(code == 0, last_err_);
    return json::parse(out);
  }
  json job(const std::string& id) {
    const auto [code, out] = client({"status", id, "--json"});
    REQUIRE_MESSAGE(code == 0, last_err_);
    return json::parse(out);
  }
  // Waits until the job is in `state` (and, with `min_step`, has completed that many steps).
  bool wait_state(const std::string& id, const std::string& state, double seconds,
                  std::int64_t min_step = 0) {
    return wait_until(seconds, [&] {
      const auto j = job(id);
      if (j.value("state", "") == state && j.value("step", std::int64_t{0}) >= min_step)
        return true;
      // Each look starts a client process: a few a second are plenty.
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      return false;
    });
  }

 private:
  int count_joins(const std::string& group) const {
    const auto all = serve_->err();
    int n = 0;
    const std::string text = "joined: agent " + group + " ";
    for (auto at = all.find(text); at != std::string::npos; at = all.find(text, at + 1)) ++n;
    return n;
  }

  std::string name_, state_, listen_, http_, last_err_;
  int starts_ = 0;
  std::unique_ptr<troupe_process> serve_;
};

// `promtool check metrics` on an exposition: "ok", or what promtool said (exit code and text).
inline std::string promtool_verdict(const std::string& exposition) {
  static int n = 0;
  const auto in = service_scratch() / ("metrics-" + std::to_string(++n) + ".txt");
  const auto said = service_scratch() / ("promtool-" + std::to_string(n) + ".out");
  std::ofstream(in) << exposition;
  const int rc = std::system(("timeout 60 sh -c 'promtool check metrics < " + in.string() + "' > " +
                              said.string() + " 2>&1")
                                 .c_str());
  std::stringstream text;
  text << std::ifstream(said).rdbuf();
  return rc == 0 && text.str().empty() ? "ok" : "exit " + std::to_string(rc) + ": " + text.str();
}

inline int starts_of(const json& job) {
  int n = 0;
  for (const auto& e : job.at("history")) n += e.at("event") == "start" ? 1 : 0;
  return n;
}

}  // namespace troupe::testing
