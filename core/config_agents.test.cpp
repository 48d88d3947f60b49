// The config keys of groups that compute in other processes and of elastic jobs:
// cluster.groups[].process, jobs[].elastic, and sync.codec (the gradients that cross them).
#include <doctest/doctest.h>

#include <string>

#include "core/config_load.hpp"
#include "core/config_testing.hpp"
#include "core/error.hpp"

using namespace troupe::config;
using troupe::config::testing::error_of;

namespace {

std::string config(const std::string& group_line, const std::string& job_lines) {
  return "cluster:\n  groups:\n    - {name: cpu, device: cpu, count: 2}\n" + group_line +
         "jobs:\n  - name: a\n    data: {dataset: synthetic}\n    batch: 32\n" + job_lines;
}

}  // namespace

TEST_CASE("process and elastic parse into their fields; the defaults are local and none") {
  const auto plain = parse_config(config("", ""), "ok.yaml");
  CHECK(plain.cluster.groups[0].process == troupe::group_process::local);
  CHECK(!plain.jobs[0].elastic);
  const auto c = parse_config(config("    - {name: far, device: sim, process: agent}\n"
                                     "    - {name: kid, device: cpu, process: separate}\n",
                                     "    elastic: {min_devices: 2, max_devices: 5}\n"),
                              "ok.yaml");
  CHECK(c.cluster.groups[1].process == troupe::group_process::agent);
  CHECK(c.cluster.groups[2].process == troupe::group_process::separate);
  REQUIRE(c.jobs[0].elastic);
  CHECK(c.jobs[0].elastic->min_devices == 2);
  CHECK(c.jobs[0].elastic->max_devices == 5);
}

TEST_CASE("process and elastic refusals name the file, line and key") {
  auto has = [](const std::string& msg, const std::string& part) {
    CHECK_MESSAGE(msg.find(part) != std::string::npos, msg);
  };
  const auto bad_name = error_of(config("    - {name: far, device: cpu, process: remote}\n", ""));
  has(bad_name, "bad.yaml:4: cluster.groups[1].process");
  has(bad_name, "local, separate, agent");
  has(error_of(config("    - {name: g, device: cuda, process: agent}\n", "")),
      "cluster.groups[1].process: a cuda group computes in the control process");
  has(error_of(config("    - {name: s, device: sim, shared: true, process: separate}\n", "")),
      "cluster.groups[1].process: a shared group computes in the control process");
  has(error_of(config("", "    elastic: {min_devices: 3, max_devices: 2}\n")),
      "jobs[0].elastic.min_devices: must not exceed max_devices (3 > 2)");
  has(error_of(config("", "    elastic: {min_devices: 0}\n")), "jobs[0].elastic.min_devices");
  has(error_of(config("", "    sync: {mode: local}\n    elastic: {min_devices: 1}\n")),
      "an elastic job needs sync.mode: ps or allreduce");
  CHECK(parse_config(config("", "    sync: {mode: allreduce}\n    elastic: {min_devices: 1}\n"),
                     "ok.yaml")
            .jobs[0]
            .elastic);
  // The distributed optimizer form too: a joining worker takes a member's moments.
  CHECK(parse_config(config("",
                            "    sync: {mode: allreduce}\n    elastic: {min_devices: 1}\n"
                            "    optimizer: {kind: max-adabelief, form: distributed}\n"),
                     "ok.yaml")
            .jobs[0]
            .elastic);
  has(error_of(config("", "    elastic: {min: 1}\n")), "jobs[0].elastic.min");
}

TEST_CASE("sync.codec: for allreduce with the replicated form; none is no codec") {
  const auto fp16 =
      parse_config(config("", "    sync: {mode: allreduce, codec: fp16}\n"), "ok.yaml");
  CHECK(fp16.jobs[0].sync.codec == "fp16");
  const auto none =
      parse_config(config("", "    sync: {mode: allreduce, codec: none}\n"), "ok.yaml");
  CHECK(none.jobs[0].sync.codec.empty());
  auto has = [](const std::string& msg, const std::string& part) {
    CHECK_MESSAGE(msg.find(part) != std::string::npos, msg);
  };
  const auto ps = error_of(config("", "    sync: {mode: ps, codec: fp16}\n"));
  has(ps, "bad.yaml:");
  has(ps, "jobs[0].sync.codec: only applies with sync mode: allreduce");
  const auto distributed =
      error_of(config("",
                      "    optimizer: {kind: max-adabelief, form: distributed}\n"
                      "    sync: {mode: allreduce, codec: topk}\n"));
  has(distributed, "sync.codec");
  has(distributed, "optimizer.form: replicated");
  // A --set that switches the mode drops the file's codec with a note, as other mode keys.
  const auto switched = parse_config(config("", "    sync: {mode: allreduce, codec: fp16}\n"),
                                     "ok.yaml", {"jobs.0.sync.mode=ps"});
  CHECK(switched.jobs[0].sync.mode == troupe::sync_mode::ps);
  CHECK(switched.jobs[0].sync.codec.empty());
}
