#include "core/launcher_env.hpp"

#include <doctest/doctest.h>

#include <map>

#include "core/testing.hpp"

using namespace troupe;

namespace {

env_lookup table(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace

TEST_CASE("the join address: the flag, then TROUPE_JOIN, then torchrun's, then Slurm's") {
  struct row {
    std::optional<std::string> flag;
    std::map<std::string, std::string> env;
    std::string host;
    int port;
    std::string from;
  };
  const row rows[] = {
      {"ctl:7000", {{"TROUPE_JOIN", "x:1"}}, "ctl", 7000, "--join"},
      {{},
       {{"TROUPE_JOIN", "10.0.0.1:7001"}, {"MASTER_ADDR", "m"}, {"MASTER_PORT", "2"}},
       "10.0.0.1",
       7001,
       "TROUPE_JOIN"},
      {{},
       {{"MASTER_ADDR", "m0"}, {"MASTER_PORT", "29500"}},
       "m0",
       29500,
       "MASTER_ADDR:MASTER_PORT"},
      {{},
       {{"SLURM_STEP_NODELIST", "gpu[07-09]"}, {"TROUPE_PORT", "7070"}},
       "gpu07",
       7070,
       "SLURM_STEP_NODELIST:TROUPE_PORT"},
  };
  for (const auto& r : rows) {
    CAPTURE(r.from);
    const auto j = resolve_join(r.flag, table(r.env));
    CHECK(j.host == r.host);
    CHECK(j.port == r.port);
    CHECK(j.from == r.from);
  }
}

TEST_CASE("the join address: missing or malformed names where it came from") {
  using troupe::testing::input_error_of;
  CHECK(input_error_of([] { resolve_join({}, table({})); }).find("--join HOST:PORT") !=
        std::string::npos);
  CHECK(input_error_of([] { resolve_join("ctl", table({})); }).find("--join: expected") == 0);
  CHECK(input_error_of([] { resolve_join("ctl:0", table({})); }).find("port from 1") !=
        std::string::npos);
  CHECK(input_error_of([] { resolve_join("ctl:99999", table({})); }).find("99999") !=
        std::string::npos);
  CHECK(input_error_of([] {
          resolve_join({}, table({{"TROUPE_JOIN", ":5"}}));
        }).find("TROUPE_JOIN") == 0);
  CHECK(input_error_of([] {
          resolve_join({}, table({{"SLURM_STEP_NODELIST", "n1"}}));
        }).find("TROUPE_PORT") != std::string::npos);
}

TEST_CASE("the first host of a Slurm node list") {
  CHECK(first_slurm_host("node[01-04,07],gpu3") == "node01");
  CHECK(first_slurm_host("gpu3,node[1-2]") == "gpu3");
  CHECK(first_slurm_host("a[3]") == "a3");
  CHECK(first_slurm_host("solo") == "solo");
  for (const char* bad : {"", "[1-2]", "n[", "n[x-2]", ",n1"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(first_slurm_host(bad), input_error);
  }
}

TEST_CASE("the launcher's rank: Slurm's, else torchrun's") {
  CHECK(launcher_rank(table({{"SLURM_PROCID", "3"}, {"RANK", "1"}})) == "3");
  CHECK(launcher_rank(table({{"RANK", "1"}})) == "1");
  CHECK_FALSE(launcher_rank(table({})).has_value());
}
