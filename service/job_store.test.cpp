#include "service/job_store.hpp"

#include <doctest/doctest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "core/testing.hpp"

namespace fs = std::filesystem;
using troupe::service::job_store;
using troupe::service::stored_event;
using troupe::service::stored_job;
using troupe::testing::input_error_of;
using troupe::testing::temp_dir;

namespace {

stored_job job(const std::string& name, int priority = 0, std::vector<std::string> sets = {}) {
  stored_job j;
  j.name = name;
  j.priority = priority;
  j.source = name + ".yaml";
  j.yaml = "jobs:\n  - name: " + name + "\n";
  j.sets = std::move(sets);
  return j;
}

std::vector<std::string> ids(const std::vector<stored_job>& jobs) {
  std::vector<std::string> out;
  for (const auto& j : jobs) out.push_back(j.id);
  return out;
}

std::vector<std::string> event_names(const std::vector<stored_event>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(e.event);
  return out;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Runs one statement on the file directly, outside the store, as another tool would.
std::string sqlite_text(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, sql, -1, &s, nullptr) == SQLITE_OK);
  std::string out;
  if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
    out = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
  sqlite3_finalize(s);
  sqlite3_close(db);
  return out;
}

}  // namespace

TEST_CASE("job store: add numbers jobs 1, 2, 3 in order; list is by seq; unknown ids") {
  temp_dir d;
  job_store s(d.str());
  CHECK(s.path() == d / "troupe.db");
  const double before = now_s();
  const auto added = s.add({job("a", 5, {"lr=0.1", "steps=3"}), job("a"), job("b")});
  REQUIRE(added.size() == 3);
  CHECK(ids(added) == std::vector<std::string>{"a-1", "a-2", "b-3"});
  CHECK(added[0].seq == 1);
  CHECK(added[2].seq == 3);
  CHECK(added[0].state == "queued");
  CHECK(added[0].submitted_at >= before);
  CHECK(added[0].submitted_at <= now_s());
  CHECK(added[0].updated_at == added[0].submitted_at);

  stored_job paused = job("c");
  paused.state = "paused";
  paused.reason = "held by the user";
  const auto more = s.add({paused});
  CHECK(more[0].id == "c-4");
  CHECK(ids(s.list()) == std::vector<std::string>{"a-1", "a-2", "b-3", "c-4"});

  const auto a1 = s.get("a-1");
  REQUIRE(a1.has_value());
  CHECK(a1->priority == 5);
  CHECK(a1->sets == std::vector<std::string>{"lr=0.1", "steps=3"});
  CHECK(a1->yaml == "jobs:\n  - name: a\n");
  CHECK(a1->source == "a.yaml");
  CHECK(s.get("c-4")->state == "paused");
  CHECK(s.get("c-4")->reason == "held by the user");
  CHECK(event_names(s.events("a-1")) == std::vector<std::string>{"submitted"});
  CHECK(s.events("a-1")[0].detail == "a.yaml");

  CHECK_FALSE(s.get("nope").has_value());
  CHECK(s.events("nope").empty());
  CHECK(input_error_of([&] { s.set_state("nope", "running"); }) == "no job 'nope'");
  CHECK(input_error_of([&] { s.finish("nope", "failed", "", "x"); }) == "no job 'nope'");
  CHECK(input_error_of([&] { s.add_event("nope", "start", "fresh"); }) == "no job 'nope'");
  CHECK(input_error_of([&] { s.set_state("a-1", "sleeping"); }) ==
        "job 'a-1': unknown state 'sleeping'");
  CHECK(s.get("a-1")->state == "queued");
  CHECK(s.add({}).empty());
}

TEST_CASE("job store: states, reports, sets and events survive a reopen; seq continues") {
  temp_dir d;
  double finished_at = 0;
  {
    job_store s(d.str());
    s.add({job("mlp", 1, {"optimizer.lr=0.01"}), job("cnn")});
    s.set_state("mlp-1", "running");
    s.add_event("mlp-1", "start", "fresh");
    s.finish("mlp-1", "completed", R"({"steps":100})", "");
    s.set_state("cnn-2", "paused", "waiting for 2 GPUs");
    finished_at = s.get("mlp-1")->updated_at;
  }
  job_store s(d.str());
  const auto all = s.list();
  REQUIRE(all.size() == 2);
  CHECK(all[0].state == "completed");
  CHECK(all[0].report_json == R"({"steps":100})");
  CHECK(all[0].sets == std::vector<std::string>{"optimizer.lr=0.01"});
  CHECK(all[0].updated_at == finished_at);
  CHECK(all[0].updated_at >= all[0].submitted_at);
  CHECK(all[1].state == "paused");
  CHECK(all[1].reason == "waiting for 2 GPUs");
  const auto ev = s.events("mlp-1");
  CHECK(event_names(ev) == std::vector<std::string>{"submitted", "running", "start", "completed"});
  CHECK(ev[2].detail == "fresh");
  CHECK(ev[0].id < ev[1].id);
  CHECK(ev[1].at >= ev[0].at);
  CHECK(s.events("cnn-2").back().detail == "waiting for 2 GPUs");

  CHECK(s.add({job("mlp")})[0].id == "mlp-3");

  // finish clears the reason a paused job had, and records why it ended.
  s.finish("cnn-2", "cancelled", "", "cancelled by the user");
  CHECK(s.get("cnn-2")->reason.empty());
  CHECK(s.get("cnn-2")->error == "cancelled by the user");
  CHECK(s.events("cnn-2").back().event == "cancelled");
  CHECK(s.events("cnn-2").back().detail == "cancelled by the user");
}

TEST_CASE("job store: starts counts the start events of each job only") {
  temp_dir d;
  job_store s(d.str());
  s.add({job("x"), job("y")});
  CHECK(s.get("x-1")->starts == 0);
  s.add_event("x-1", "start", "fresh");
  s.add_event("x-1", "failure", "worker 2 lost");
  s.add_event("x-1", "restart", "");
  s.add_event("x-1", "start", "resumed from step 40");
  s.add_event("y-2", "start", "fresh");
  CHECK(s.get("x-1")->starts == 2);
  CHECK(s.get("y-2")->starts == 1);
  CHECK(s.list()[0].starts == 2);
  CHECK(s.events("x-1").back().detail == "resumed from step 40");
  CHECK(input_error_of([&] { s.add_event("x-1", "", "x"); }).find("needs a name") !=
        std::string::npos);
}

TEST_CASE("job store: a submission with one bad job adds none of its jobs") {
  temp_dir d;
  job_store s(d.str());
  s.add({job("first")});
  stored_job bad = job("");
  bad.source = "two.yaml";
  bad.index = 1;
  CHECK(input_error_of([&] {
          s.add({job("ok"), bad, job("later")});
        }) == "two.yaml: job 1 has an empty name");
  stored_job odd = job("odd");
  odd.state = "sleeping";
  CHECK_THROWS_AS(s.add({job("ok"), odd}), troupe::input_error);
  CHECK(ids(s.list()) == std::vector<std::string>{"first-1"});
  CHECK(s.events("ok-2").empty());
  // The rolled-back submissions took no numbers.
  CHECK(s.add({job("ok")})[0].id == "ok-2");
}

TEST_CASE("job store: another schema version, a non-database, a foreign database are refused") {
  temp_dir d;
  const std::string db = d / "troupe.db";
  SUBCASE("schema version 7") {
    CHECK(sqlite_text(db, "PRAGMA user_version = 7").empty());
    const std::string msg = input_error_of([&] { job_store s(d.str()); });
    CHECK(msg == db + ": schema version 7, this troupe reads version 1");
    // Refused without being changed: still the default rollback journal.
    CHECK(sqlite_text(db, "PRAGMA journal_mode") == "delete");
  }
  SUBCASE("garbage text") {
    std::ofstream(db) << "not a database";
    const std::string msg = input_error_of([&] { job_store s(d.str()); });
    CHECK(msg.find(db + ": ") == 0);
    CHECK(msg.find("not a troupe state database") != std::string::npos);
  }
  SUBCASE("a database of something else") {
    sqlite_text(db, "CREATE TABLE other (x)");
    const std::string msg = input_error_of([&] { job_store s(d.str()); });
    CHECK(msg.find(db + ": ") == 0);
    CHECK(msg.find("without a troupe schema version") != std::string::npos);
  }
  SUBCASE("version 1 is used as is") {
    { job_store s(d.str()); }
    CHECK(sqlite_text(db, "PRAGMA user_version") == "1");
    job_store s(d.str());
    CHECK(s.list().empty());
  }
}

TEST_CASE("job store: in_states filters and keeps submission order") {
  temp_dir d;
  job_store s(d.str());
  s.add({job("a"), job("b"), job("c"), job("d")});
  s.set_state("a-1", "running");
  s.set_state("c-3", "paused", "held");
  s.finish("d-4", "failed", "", "NaN loss");
  CHECK(ids(s.in_states({"queued"})) == std::vector<std::string>{"b-2"});
  CHECK(ids(s.in_states({"paused", "running"})) == std::vector<std::string>{"a-1", "c-3"});
  CHECK(ids(s.in_states({"failed"})) == std::vector<std::string>{"d-4"});
  CHECK(s.in_states({"failed"})[0].error == "NaN loss");
  CHECK(s.in_states({"completed"}).empty());
  CHECK(s.in_states({}).empty());
}

TEST_CASE("job store: WAL journal; a created directory is private; a bad directory is named") {
  temp_dir d;
  const std::string dir = d / "state/nested";
  {
    job_store s(dir);
    CHECK(sqlite_text(s.path(), "PRAGMA journal_mode") == "wal");
  }
  CHECK((fs::status(dir).permissions() & fs::perms::all) == fs::perms::owner_all);

  std::ofstream(d / "file") << "x";
  const std::string not_dir = input_error_of([&] { job_store s(d / "file"); });
  CHECK(not_dir.find(d / "file") == 0);
  const std::string under_file = input_error_of([&] { job_store s(d / "file/sub"); });
  CHECK(under_file.find(d / "file/sub: cannot create the state directory") == 0);
}

TEST_CASE("job store: threads adding and updating at once lose nothing") {
  temp_dir d;
  job_store s(d.str());
  constexpr int threads = 8, per_thread = 20;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&s, t] {
      for (int i = 0; i < per_thread; ++i) {
        const auto j = s.add({job("t" + std::to_string(t))})[0];
        s.set_state(j.id, "running");
        s.add_event(j.id, "start", "fresh");
      }
    });
  }
  for (auto& th : pool) th.join();
  const auto all = s.list();
  REQUIRE(all.size() == threads * per_thread);
  std::set<std::string> seen;
  for (std::size_t i = 0; i < all.size(); ++i) {
    CHECK(all[i].seq == static_cast<std::int64_t>(i + 1));
    CHECK(all[i].state == "running");
    CHECK(all[i].starts == 1);
    seen.insert(all[i].id);
  }
  CHECK(seen.size() == all.size());
}
