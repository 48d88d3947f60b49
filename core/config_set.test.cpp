// `--set PATH=VALUE` on a config: overrides applied before validation, and a sync mode switched
// by one (the file's keys of the old mode dropped, with a note).
#include "core/config_load.hpp"
#include "core/config_testing.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/error.hpp"

using namespace troupe::config;
using troupe::config::testing::base;
using troupe::config::testing::error_of;
using troupe::config::testing::expect;

TEST_CASE("--set overrides apply before validation") {
  SUBCASE("existing keys, list indices and YAML values") {
    const auto rc = parse_config(
        base, "good.yaml",
        {"jobs.0.epochs=3", "cluster.groups.1.slowdown=4", "jobs.0.model.hidden=[64, 32]",
         "jobs.0.optimizer.kind=sgd", "cluster.groups.1.row_seconds=2.5e-5"});
    CHECK(rc.jobs[0].epochs == 3);
    CHECK(rc.cluster.groups[1].slowdown == 4.0);
    CHECK(rc.cluster.groups[1].row_seconds == 2.5e-5);
    CHECK_FALSE(rc.cluster.groups[0].row_seconds);
    CHECK(rc.jobs[0].model.hidden == std::vector<std::size_t>{64, 32});
    CHECK(rc.jobs[0].optimizer.kind == troupe::optimizer_kind::sgd);
  }
  SUBCASE("a later set wins; index == length appends") {
    const auto rc = parse_config(base, "good.yaml",
                                 {"jobs.0.batch=8", "jobs.0.batch=16", "jobs.0.faults.0.step=2",
                                  "jobs.0.faults.0.action=kill", "jobs.0.faults.0.target=slow"});
    CHECK(rc.jobs[0].batch == 16);
    REQUIRE(rc.jobs[0].faults.size() == 1);
    CHECK(rc.jobs[0].faults[0].action == troupe::fault_action::kill);
  }
  SUBCASE("an invalid value names the --set") {
    const auto msg = error_of(base, {"jobs.0.batch=-5"});
    CHECK_MESSAGE(
        msg == "bad.yaml: --set 'jobs.0.batch=-5': jobs[0].batch: must be positive, got -5", msg);
  }
  SUBCASE("a key the schema does not know") {
    const auto msg = error_of(base, {"jobs.0.optimizer.rate=0.1"});
    CHECK_MESSAGE(msg.find("--set 'jobs.0.optimizer.rate=0.1'") != std::string::npos, msg);
    CHECK_MESSAGE(msg.find("unknown key 'rate' in jobs[0].optimizer") != std::string::npos, msg);
  }
  SUBCASE("an index out of range") {
    const auto msg = error_of(base, {"jobs.5.epochs=1"});
    CHECK_MESSAGE(msg.find("--set 'jobs.5.epochs=1': jobs: index 5 out of range") == 10, msg);
  }
  SUBCASE("a key under a scalar, or a missing =") {
    CHECK(error_of(base, {"jobs.0.batch.size=1"}).find("not a map") != std::string::npos);
    CHECK(error_of(base, {"jobs.0.batch"}).find("expected PATH=VALUE") != std::string::npos);
    CHECK(error_of(base, {"jobs..batch=1"}).find("empty key") != std::string::npos);
  }
  SUBCASE("an appended job missing its name blames the --set") {
    const auto msg = error_of(base, {"jobs.1.batch=4"});
    CHECK_MESSAGE(msg.find("--set 'jobs.1.batch=4': jobs[1].name: required") != std::string::npos,
                  msg);
  }
  SUBCASE("a set that closes a cycle") {
    const auto msg = error_of(base + "  - name: b\n    data: {dataset: synthetic}\n    after: a\n",
                              {"jobs.0.after=b"});
    CHECK_MESSAGE(msg.find("--set 'jobs.0.after=b'") != std::string::npos, msg);
    CHECK_MESSAGE(msg.find("cycle: a -> b -> a") != std::string::npos, msg);
  }
}

TEST_CASE("--set of sync.mode drops the file's keys of the old mode, with a note") {
  const std::string ps = base + "    sync: {mode: ps, ps_shards: 2}\n";
  SUBCASE("ps -> allreduce: ps_shards is unused, said in a note naming its line") {
    const auto rc = parse_config(ps, "good.yaml", {"jobs.0.sync.mode=allreduce"});
    CHECK(rc.jobs[0].sync.mode == troupe::sync_mode::allreduce);
    CHECK(rc.jobs[0].sync.ps_shards == 1);
    REQUIRE(rc.notes.size() == 1);
    CHECK_MESSAGE(rc.notes[0].rfind("good.yaml:14: jobs[0].sync.ps_shards (2)", 0) == 0,
                  rc.notes[0]);
    CHECK_MESSAGE(rc.notes[0].find("unused with mode: allreduce") != std::string::npos,
                  rc.notes[0]);
  }
  SUBCASE("local -> ps: period is unused; the ps keys stay") {
    const auto rc = parse_config(base + "    sync: {mode: local, period: 4}\n", "good.yaml",
                                 {"jobs.0.sync.mode=ps", "jobs.0.sync.ps_shards=3"});
    CHECK(rc.jobs[0].sync.mode == troupe::sync_mode::ps);
    CHECK(rc.jobs[0].sync.ps_shards == 3);
    CHECK(rc.jobs[0].sync.period == 1);
    REQUIRE(rc.notes.size() == 1);
    CHECK(rc.notes[0].find("jobs[0].sync.period (4)") != std::string::npos);
  }
  SUBCASE("the mode of the file itself is kept: no note") {
    const auto rc = parse_config(ps, "good.yaml", {"jobs.0.sync.mode=ps"});
    CHECK(rc.jobs[0].sync.ps_shards == 2);
    CHECK(rc.notes.empty());
  }
  SUBCASE("still errors: the file's own mismatch, or ps_shards given by a --set too") {
    expect(error_of(base + "    sync: {mode: allreduce, ps_shards: 2}\n"),
           "14: jobs[0].sync.ps_shards:", "mode: ps");
    const auto msg = error_of(ps, {"jobs.0.sync.mode=allreduce", "jobs.0.sync.ps_shards=4"});
    CHECK_MESSAGE(msg.find("--set 'jobs.0.sync.ps_shards=4'") != std::string::npos, msg);
    CHECK_MESSAGE(msg.find("mode: ps") != std::string::npos, msg);
  }
  SUBCASE("a bad mode is still the error, not a note") {
    expect(error_of(ps, {"jobs.0.sync.mode=ring"}), " --set 'jobs.0.sync.mode=ring'", "ps");
  }
}
