// `troupe serve` as a user runs it (tests/service_support.hpp): the service, its agents and its
// clients on loopback, with the service killed, stopped and started again over one state
// directory.
#include <httplib.h>
#include <sqlite3.h>

#include "tests/service_support.hpp"
#include "tests/tls_support.hpp"

using namespace troupe::testing;

namespace {
const std::filesystem::path& scratch = service_scratch();
}  // namespace

TEST_CASE("serve with three agents: priorities, after:, logs --follow and cancel") {
  service svc("queue");
  svc.start();
  const auto g1 = svc.agent("a1");
  const auto g2 = svc.agent("a2");
  const auto g3 = svc.agent("a3");
  // A job on every agent holds the queue back while we look at it.
  const auto blocker = svc.submit("jobs:\n" + job_yaml("blocker", "a1, a2, a3", 1000000)).at(0);
  REQUIRE(svc.wait_state(blocker, "running", 60, 1));
  troupe_process follow(
      scratch, "queue-follow",
      {"logs", blocker, "--follow", "--server", svc.url(), "--state", svc.state_dir()});
  const auto ids = svc.submit("jobs:\n" + job_yaml("low", "a1, a2", 40, "    priority: 1\n") +
                              job_yaml("high", "a1, a2, a3", 40, "    priority: 5\n") +
                              job_yaml("next", "a3", 40, "    priority: 9\n    after: high\n"));
  REQUIRE(ids == std::vector<std::string>{"low-2", "high-3", "next-4"});
  const auto queue = svc.status().at("jobs");
  std::map<std::string, json> by_id;
  for (const auto& j : queue) by_id[j.at("id")] = j;
  CHECK(by_id["low-2"].at("state") == "queued");
  // Higher priority starts first; the dependent job says what it waits for.
  CHECK(by_id["high-3"].at("position").get<int>() < by_id["low-2"].at("position").get<int>());
  CHECK(by_id["next-4"].at("reason").get<std::string>().find("'high-3'") != std::string::npos);
  CHECK(by_id["low-2"].at("reason").get<std::string>().find("free devices") != std::string::npos);
  // Listed in start order: the queued jobs before the running one.
  CHECK(queue.at(0).at("state") == "queued");
  CHECK(queue.at(3).at("id") == blocker);

  CHECK(svc.client({"cancel", blocker}).first == 0);
  CHECK(svc.wait_state(blocker, "cancelled", 60));
  // The follower streamed the running job's step lines and ended with it.
  CHECK(follow.wait_for_exit(60) == 0);
  CHECK(follow.out().find("step 1/") != std::string::npos);
  CHECK(follow.out().find("finished: cancelled") != std::string::npos);
  // The agents were freed: the queued jobs ran on them, high before next.
  for (const auto& id : ids) CHECK(svc.wait_state(id, "completed", 120));
  const auto high = svc.job("high-3");
  const auto next = svc.job("next-4");
  CHECK(high.at("report").at("steps") == 40);
  CHECK(next.at("report").at("steps") == 40);
  CHECK(next.at("report").at("started_s").get<double>() >=
        high.at("report").at("finished_s").get<double>());
  CHECK(starts_of(svc.job(blocker)) == 1);
  // Cancelling what has ended, or what does not exist: exit 2 and the service's reason.
  CHECK(svc.client({"cancel", blocker}).first == 2);
  CHECK(svc.last_err().find("has ended (cancelled)") != std::string::npos);
  CHECK(svc.client({"status", "nope-9"}).first == 2);
  CHECK(svc.last_err().find("no job 'nope-9'") != std::string::npos);
}

TEST_CASE("one serve per state directory and per port; no silent start over earlier jobs") {
  service svc("owner");
  svc.start();
  const auto port = [] { return "127.0.0.1:" + std::to_string(free_port()); };
  // The same state directory on other ports: refused, naming the owner.
  troupe_process same_state(
      scratch, "owner-same-state",
      {"serve", "--state", svc.state_dir(), "--listen", port(), "--http", port()});
  CHECK(same_state.wait_for_exit(60) == 2);
  CHECK(same_state.err().find("in use by another troupe serve (pid " +
                              std::to_string(svc.process().pid()) + ")") != std::string::npos);
  // Another state directory on the same API port: refused (no SO_REUSEPORT sharing).
  troupe_process same_port(scratch, "owner-same-port",
                           {"serve", "--cluster", write("owner-other.yaml", cluster_yaml),
                            "--state", (scratch / "owner-other-state").string(), "--listen", port(),
                            "--http", "127.0.0.1:" + std::to_string(svc.http_port())});
  CHECK(same_port.wait_for_exit(60) == 2);
  CHECK(same_port.err().find("cannot listen there") != std::string::npos);
  // So every request reaches the one service.
  const auto client = svc.http_client();
  for (int i = 0; i < 10; ++i) {
    const auto res = client->Get("/api/v1/jobs");
    REQUIRE(res);
    CHECK(res->status == 200);
  }

  const auto first = svc.submit("jobs:\n" + job_yaml("first", "s1", 5)).at(0);
  REQUIRE(svc.wait_state(first, "completed", 60));
  svc.process().kill(SIGKILL);
  // The database emptied, the job's log still there: refused rather than started from job 1.
  const auto db = std::filesystem::path(svc.state_dir()) / "troupe.db";
  std::filesystem::resize_file(db, 0);
  for (const char* side : {"-wal", "-shm"}) std::filesystem::remove(db.string() + side);
  troupe_process emptied(
      scratch, "owner-emptied",
      {"serve", "--state", svc.state_dir(), "--listen", port(), "--http", port()});
  CHECK(emptied.wait_for_exit(60) == 2);
  CHECK(emptied.err().find("--reset") != std::string::npos);
  // With --reset a new database numbers jobs after the ones its files name.
  svc.start({"--reset"});
  const auto next = svc.submit("jobs:\n" + job_yaml("first", "s1", 5)).at(0);
  CHECK(next == "first-2");
}

TEST_CASE("a database damaged past its header: serve exits 2 at once, an agent joining or not") {
  service svc("damaged");
  svc.start();
  const auto first = svc.submit("jobs:\n" + job_yaml("first", "s1", 5)).at(0);
  REQUIRE(svc.wait_state(first, "completed", 60));
  svc.process().kill(SIGTERM);
  REQUIRE(svc.process().wait_for_exit(60) == 0);
  // A table gone (a tool, a bad restore): the header and schema version still look right.
  sqlite3* db = nullptr;
  const auto path = (std::filesystem::path(svc.state_dir()) / "troupe.db").string();
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  CHECK(sqlite3_exec(db, "DROP TABLE events", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    // An agent trying to join all the while (it once hung serve's exit on this path).
    troupe_process agent(scratch, "damaged-agent",
                         {"agent", "--join", svc.listen_address(), "--name", "a1", "--group", "a1",
                          "--device", "sim", "--state", svc.state_dir(), "--join-timeout", "30"});
    troupe_process again(scratch, "damaged-serve",
                         {"serve", "--state", svc.state_dir(), "--listen", svc.listen_address(),
                          "--http", svc.http_address()});
    // A bound, not the figure: it exits in well under a second here.
    CHECK(again.wait_for_exit(30) == 2);
    CHECK(again.err().find(path) != std::string::npos);
    CHECK(again.err().find("events") != std::string::npos);
  }
}

TEST_CASE("a database serve may not write is refused at the start, exit 2") {
  service svc("readonly");
  svc.start();
  svc.process().kill(SIGTERM);
  REQUIRE(svc.process().wait_for_exit(60) == 0);
  const auto path = (std::filesystem::path(svc.state_dir()) / "troupe.db").string();
  // Immutable: root writes past permissions, not past this attribute (ext4, xfs, btrfs).
  if (std::system(("chattr +i " + path + " 2>/dev/null").c_str()) != 0) {
    MESSAGE("chattr +i is not supported here: the read-only case is not checked");
    return;
  }
  troupe_process again(scratch, "readonly-serve",
                       {"serve", "--state", svc.state_dir(), "--listen", svc.listen_address(),
                        "--http", svc.http_address()});
  const auto code = again.wait_for_exit(30);
  std::system(("chattr -i " + path).c_str());
  CHECK(code == 2);
  CHECK(again.err().find(path + ": read-only") != std::string::npos);
}

TEST_CASE(
    "serve killed with SIGKILL while three jobs run: each resumes from its checkpoint, and one "
    "whose dependency completed before the kill is not held back by it") {
  service svc("crash");
  svc.start();
  auto agent = svc.agent("a1");
  // submit --wait returns when the job has ended, with its state.
  const auto [waited, said] = svc.client(
      {"submit", write("early.yaml", "jobs:\n" + job_yaml("early", "s2", 30)), "--wait"});
  CHECK(waited == 0);
  CHECK(said == "early-1\nearly-1: completed\n");
  const std::string done = "early-1";
  auto ids = svc.submit(
      "jobs:\n" + job_yaml("inproc", "s1", 600, "    checkpoint: {every_steps: 20}\n") +
      job_yaml("remote", "a1", 600, "    checkpoint: {every_steps: 20}\n") +
      job_yaml("first", "s2", 10) +
      job_yaml("second", "s2", 600, "    after: first\n    checkpoint: {every_steps: 20}\n"));
  REQUIRE(ids == std::vector<std::string>{"inproc-2", "remote-3", "first-4", "second-5"});
  const std::string first = ids[2];
  ids.erase(ids.begin() + 2);
  // `second` runs once `first` completed; the restart must not wait for `first` again.
  for (const auto& id : ids) REQUIRE(svc.wait_state(id, "running", 60, 60));
  REQUIRE(svc.job(first).at("state") == "completed");
  svc.process().kill(SIGKILL);
  // The checkpoints on disk when it died.
  std::map<std::string, std::int64_t> newest;
  for (const auto& id : ids)
    for (const auto& f : std::filesystem::directory_iterator(
             std::filesystem::path(svc.state_dir()) / "checkpoints" / id)) {
      // ckpt-STEP.trp; a temp file of a write cut short starts with a dot.
      const auto name = f.path().filename().string();
      if (name.rfind("ckpt-", 0) == 0 && f.path().extension() == ".trp")
        newest[id] = std::max<std::int64_t>(newest[id], std::stoll(name.substr(5)));
    }
  svc.start();
  for (const auto& id : ids) {
    REQUIRE(svc.wait_state(id, "completed", 120));
    const auto j = svc.job(id);
    // Two starts, the second from the newest checkpoint; the step count is exact.
    CHECK(starts_of(j) == 2);
    CHECK(j.at("report").at("steps") == 600);
    CHECK(j.at("report").at("checkpoints").at("resumed_from_step") == newest[id]);
    CHECK(newest[id] >= 60);
    MESSAGE(id << ": newest checkpoint at the kill " << newest[id] << ", resumed from "
               << j.at("report").at("checkpoints").at("resumed_from_step") << ", steps "
               << j.at("report").at("steps") << ", starts " << starts_of(j));
    CHECK(j.at("report").at("faults").at("lost_steps") == 0);
  }
  CHECK(starts_of(svc.job(first)) == 1);
  // What finished before the crash is still served, report and all.
  const auto early = svc.job(done);
  CHECK(early.at("state") == "completed");
  CHECK(early.at("report").at("steps") == 30);
  CHECK(starts_of(early) == 1);
  // The agent rejoined the new service by itself.
  CHECK(agent->err().find("lost the control process") != std::string::npos);
}

TEST_CASE("troupe inject on a live job: the failure and the restart show, no step is lost") {
  service svc("inject");
  svc.start();
  // Far more steps than the test waits for: the job cannot end before the inject reaches it,
  // however slow the client's start (a sanitizer build) or fast the steps. It is cancelled once
  // the restart shows.
  auto yaml = job_yaml("victim", "s1, s2", 100000000);
  yaml.replace(yaml.find("epochs: 1000"), 12, "epochs: 100000000");
  const auto id = svc.submit("jobs:\n" + yaml).at(0);
  REQUIRE(svc.wait_state(id, "running", 60, 20));
  const auto [code, out] = svc.client({"inject", id, "kill:s1/0"});
  REQUIRE_MESSAGE(code == 0, svc.last_err());
  const auto events_of = [&] {
    const auto j = svc.job(id);
    std::string events;
    for (const auto& e : j.at("history")) events += e.at("event").get<std::string>() + " ";
    return events;
  };
  std::string events;
  CHECK(wait_until(120, [&] {
    events = events_of();
    if (events.find("restart") != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return false;
  }));
  CHECK(events.find("inject") != std::string::npos);
  CHECK(events.find("failure") != std::string::npos);
  // Steps after the restart: the job trains on from where it was.
  const auto restarted_at = svc.job(id).value("step", std::int64_t{0});
  REQUIRE(svc.wait_state(id, "running", 60, restarted_at + 20));
  CHECK(svc.client({"cancel", id}).first == 0);
  REQUIRE(svc.wait_state(id, "cancelled", 120));
  const auto j = svc.job(id);
  // At least the injected kill's (a loaded machine may add a step deadline's).
  CHECK(j.at("report").at("faults").at("restarts") >= 1);
  CHECK(j.at("report").at("faults").at("lost_steps") == 0);
  CHECK(j.at("report").at("steps") >= restarted_at + 20);
  // A fault the job cannot take, and a job that has ended: refused with exit 2.
  CHECK(svc.client({"inject", id, "kill:s1/0"}).first == 2);
  CHECK(svc.last_err().find("is not running (cancelled)") != std::string::npos);
  CHECK(svc.client({"inject", id, "kill:nowhere/0"}).first == 2);
}

TEST_CASE("a preemptible job is paused for a higher-priority one and resumes; both complete") {
  service svc("preempt");
  svc.start();
  const auto low =
      svc.submit("jobs:\n" + job_yaml("low", "s1", 400, "    priority: 0\n    preemptible: true\n"))
          .at(0);
  REQUIRE(svc.wait_state(low, "running", 60, 40));
  const auto high = svc.submit("jobs:\n" + job_yaml("high", "s1", 300, "    priority: 5\n")).at(0);
  // While the high job runs, the low one is paused and says for whom.
  REQUIRE(svc.wait_state(low, "paused", 60));
  CHECK(svc.job(low).at("reason").get<std::string>().find("for '" + high + "'") !=
        std::string::npos);
  REQUIRE(svc.wait_state(high, "completed", 120));
  REQUIRE(svc.wait_state(low, "completed", 120));
  const auto l = svc.job(low);
  CHECK(starts_of(l) == 2);
  CHECK(l.at("report").at("steps") == 400);
  const auto paused_at = l.at("report").at("checkpoints").at("resumed_from_step").get<int>();
  CHECK(paused_at >= 40);
  MESSAGE(low << " paused at step " << paused_at << " for " << high << ", final steps "
              << l.at("report").at("steps"));
  CHECK(paused_at < 400);
  std::string events;
  for (const auto& e : l.at("history")) events += e.at("event").get<std::string>() + " ";
  CHECK(events.find("paused") != std::string::npos);
  // The high job ran while the low one was paused.
  const auto h = svc.job(high);
  CHECK(h.at("report").at("started_s").get<double>() <
        l.at("report").at("finished_s").get<double>());
}

TEST_CASE("SIGTERM to serve: exit 0, a checkpoint on disk, the job resumes at the next start") {
  service svc("term");
  svc.start();
  const auto id = svc.submit("jobs:\n" + job_yaml("long", "s1", 500)).at(0);
  REQUIRE(svc.wait_state(id, "running", 60, 30));
  const auto asked = std::chrono::steady_clock::now();
  svc.process().kill(SIGTERM);
  CHECK(svc.process().wait_for_exit(30) == 0);
  MESSAGE("serve exited "
          << std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count()
          << " s after SIGTERM");
  const auto dir = std::filesystem::path(svc.state_dir()) / "checkpoints" / id;
  CHECK(std::distance(std::filesystem::directory_iterator(dir),
                      std::filesystem::directory_iterator{}) >= 1);
  svc.start();
  REQUIRE(svc.wait_state(id, "completed", 120));
  const auto j = svc.job(id);
  CHECK(j.at("report").at("steps") == 500);
  CHECK(j.at("report").at("checkpoints").at("resumed_from_step").get<int>() >= 30);
  MESSAGE(id << " resumed from step " << j.at("report").at("checkpoints").at("resumed_from_step")
             << ", final steps " << j.at("report").at("steps"));
  CHECK(starts_of(j) == 2);
}

TEST_CASE("bad input at submit: the file's line and key, exit 2, nothing queued") {
  service svc("bad");
  svc.start();
  const auto bad = write("bad-jobs.yaml", "jobs:\n" + job_yaml("b", "s1", 10) + "    batch: -3\n");
  CHECK(svc.client({"submit", bad}).first == 2);
  CHECK(svc.last_err().find("bad-jobs.yaml:") != std::string::npos);
  CHECK(svc.last_err().find("batch") != std::string::npos);
  const auto with_cluster =
      write("with-cluster.yaml", std::string(cluster_yaml) + "jobs:\n" + job_yaml("c", "s1", 10));
  CHECK(svc.client({"submit", with_cluster}).first == 2);
  CHECK(svc.last_err().find("the cluster is the service's") != std::string::npos);
  CHECK(svc.status().at("jobs").empty());
}

TEST_CASE(
    "the HTTP API: JSON errors for bad bodies, oversized ones, unknown routes and cut-off "
    "clients; /healthz and /readyz") {
  service svc("http");
  svc.start();
  auto client = svc.http_client();
  auto& c = *client;
  const auto error_of = [](const httplib::Result& r) {
    REQUIRE(r);
    const auto j = json::parse(r->body, nullptr, false);
    REQUIRE(j.is_object());
    return j.value("error", std::string());
  };
  auto r = c.Post("/api/v1/jobs", "{not json", "application/json");
  CHECK(r->status == 400);
  CHECK(error_of(r).find("JSON object") != std::string::npos);
  r = c.Post("/api/v1/jobs", R"({"yaml": 7})", "application/json");
  CHECK(r->status == 400);
  CHECK(error_of(r).find("'yaml' must be a string") != std::string::npos);
  // A field the endpoint does not know is refused, named, not ignored; nothing is queued.
  r = c.Post("/api/v1/jobs", R"({"yaml": "jobs: []", "sets": ["batch=2"]})", "application/json");
  CHECK(r->status == 400);
  CHECK(error_of(r).find("unknown field 'sets' (known: yaml, file, set)") != std::string::npos);
  r = c.Post("/api/v1/jobs/x-1/cancel", R"({"force": true})", "application/json");
  CHECK(r->status == 400);
  CHECK(error_of(r).find("unknown field 'force'") != std::string::npos);
  r = c.Post("/api/v1/jobs", std::string(2 << 20, 'x'), "application/json");
  REQUIRE(r);
  CHECK(r->status == 413);
  CHECK(!error_of(r).empty());
  r = c.Get("/api/v1/nothing");
  CHECK(r->status == 404);
  CHECK(error_of(r).find("no such endpoint") != std::string::npos);
  r = c.Get("/api/v1/jobs/x-1/logs?offset=abc");
  CHECK(r->status == 400);
  CHECK(error_of(r).find("offset must be a byte count") != std::string::npos);
  r = c.Get("/api/v1/jobs/x-1/logs?offset=0");
  CHECK(r->status == 404);
  r = c.Get("/healthz");
  CHECK(r->status == 200);
  r = c.Get("/readyz");
  CHECK(r->status == 200);

  // A client that sends half a submission and goes away: nothing is queued.
  const std::string body = R"({"yaml": "jobs:\n)" + std::string(100, ' ');
  const std::string head = "POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                           svc.token() +
                           "\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n";
  CHECK(send_tls_and_close(svc.http_port(), head + body));
  CHECK(svc.status().at("jobs").empty());
  r = c.Get("/healthz");
  CHECK(r->status == 200);
}

TEST_CASE("troupe drain AGENT: the agent leaves at a step boundary and exits 0; nothing fails") {
  service svc("drain");
  svc.start();
  auto agent = svc.agent("a1", {"--metrics", "127.0.0.1:0"});
  // Long enough (about 15 s of sim steps) to be running still when the drain comes, even where
  // each client call is slow (the sanitizers).
  const auto id =
      svc.submit("jobs:\n" + job_yaml("moving", "a1, s1", 1500,
                                      "    supervision: {crash: migrate, hang: migrate, "
                                      "lost-group: migrate, hang_floor_s: 30}\n"))
          .at(0);
  REQUIRE(svc.wait_state(id, "running", 60, 20));
  // The agent's own /metrics while it serves the job's worker.
  const std::string said = "/metrics on port ";
  REQUIRE(agent->wait_for_text(said, 30));
  const auto err = agent->err();
  httplib::Client scrape("127.0.0.1", std::stoi(err.substr(err.find(said) + said.size())));
  CHECK(scrape.Get("/metrics")->status == 401);  // the token, as on every Troupe port
  scrape.set_bearer_token_auth(svc.token());
  const auto got = scrape.Get("/metrics");
  REQUIRE(got);
  CHECK(got->body.find("troupe_agent_joined{agent=\"a1\"} 1\n") != std::string::npos);
  // A loaded machine may have moved the worker off already (a step deadline): hosted, then.
  CHECK(got->body.find("troupe_agent_workers_hosted_total{agent=\"a1\"} 0\n") == std::string::npos);
  CHECK(got->body.find("troupe_agent_calls_total{agent=\"a1\"} 0\n") == std::string::npos);
  CHECK(promtool_verdict(got->body) == "ok");
  const auto [code, out] = svc.client({"drain", "a1"});
  CHECK_MESSAGE(code == 0, svc.last_err());
  CHECK(agent->wait_for_exit(60) == 0);
  REQUIRE(svc.wait_state(id, "completed", 240));
  const auto report = svc.job(id).at("report");
  CHECK(report.at("steps") == 1500);
  // A leave, not a loss: no failure, nothing migrated by a policy, nothing computed again.
  CHECK(report.at("faults").at("failures") == 0);
  CHECK(report.at("faults").at("migrations") == 0);
  CHECK(report.at("faults").at("recomputed_steps") == 0);
  CHECK(report.at("faults").at("lost_steps") == 0);
  CHECK(report.at("sample_audit").at("counted_twice") == 0);
  CHECK(report.at("sample_audit").at("never_counted") == 0);
  bool left = false;
  for (const auto& e : report.at("events"))
    left = left || (e.at("kind") == "left" &&
                    e.at("detail").get<std::string>().find("a1/0") != std::string::npos);
  CHECK(left);
  const auto agents = json::parse(svc.client({"agents", "--json"}).second).at("agents");
  REQUIRE(agents.size() == 1);
  CHECK(agents[0].at("health") == "lost");
  CHECK(agents[0].at("lost_reason") == "drained by the operator");
  CHECK(svc.client({"drain", "a1"}).first == 2);
  CHECK(svc.last_err().find("no agent named 'a1' is joined") != std::string::npos);
}

TEST_CASE("/metrics: promtool accepts the exposition, and a running job's samples grow") {
  service svc("metrics");
  svc.start();
  const auto id = svc.submit("jobs:\n" + job_yaml("counted", "s1", 100000)).at(0);
  REQUIRE(svc.wait_state(id, "running", 60, 5));
  auto client = svc.http_client();
  auto& c = *client;
  const std::string series = "troupe_samples_total{job=\"" + id + "\"} ";
  const auto samples = [&](const std::string& text) {
    const auto at = text.find(series);
    REQUIRE(at != std::string::npos);
    return std::stod(text.substr(at + series.size()));
  };
  const auto first = c.Get("/metrics");
  REQUIRE(first);
  CHECK(first->status == 200);
  CHECK(first->get_header_value("Content-Type").find("text/plain; version=0.0.4") == 0);
  REQUIRE(wait_until(60, [&] {
    const auto again = c.Get("/metrics");
    return again && samples(again->body) > samples(first->body);
  }));
  // Prometheus' own checker, on what was scraped.
  CHECK(promtool_verdict(first->body) == "ok");
  CHECK(first->body.find("troupe_jobs{state=\"running\"} 1\n") != std::string::npos);
  // The whole batch on the one group: 32 samples, or the 26 of a pass's last step.
  const std::string split = "troupe_split_samples{job=\"" + id + "\",group=\"s1\"} ";
  const auto at = first->body.find(split);
  REQUIRE(at != std::string::npos);
  const int on_s1 = std::stoi(first->body.substr(at + split.size()));
  CHECK((on_s1 == 32 || on_s1 == 26));
  CHECK(svc.client({"cancel", id}).first == 0);
}

TEST_CASE("an agent started with --state rejoins a restarted serve after a token rotation") {
  service svc("rotate");
  svc.start();
  auto agent = svc.agent("a1");
  const auto before = svc.token();
  troupe_process rotate(scratch, "rotate-token", {"token", "--rotate", "--state", svc.state_dir()});
  REQUIRE(rotate.wait_for_exit(60) == 0);
  REQUIRE(svc.token() != before);
  svc.process().kill(SIGKILL);
  svc.start();
  // The agent reads the state directory's token at each join attempt: the new one.
  CHECK(svc.process().wait_for_text("joined: agent a1 ", 90));
  CHECK_FALSE(agent->wait_for_exit(0).has_value());
  const auto id = svc.submit("jobs:\n" + job_yaml("after-rotation", "a1", 20)).at(0);
  CHECK(svc.wait_state(id, "completed", 90));
}
