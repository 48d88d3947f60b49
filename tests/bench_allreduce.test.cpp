// `troupe bench allreduce` through the built binary, with ranks as processes: every allreduce
// form sums exactly over shared memory and ZeroMQ ipc, and a bad --algorithm exits 2 naming the
// flag. Tiny sizes and a few iterations: it checks the sums, not the speed.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "collectives/shm/shm_link.hpp"
#include "core/testing.hpp"
#include "tests/binary_support.hpp"

using namespace troupe::testing;

const troupe::testing::temp_dir scratch{"troupe-bench-allreduce"};

TEST_CASE("bench allreduce: every form sums exactly between processes") {
  std::vector<std::string> transports{"ipc"};
  if (troupe::collectives::cross_memory_attach_allowed()) transports.push_back("shm");
  for (const std::string& transport : transports)
    for (const std::string form : {"ring", "one-step", "two-step", "auto"}) {
      const auto json = scratch.path / (transport + "-" + form + ".json");
      const auto o = run_troupe_in(scratch.path,
                                   "bench allreduce --ranks 3 --transport " + transport +
                                       " --curve off --algorithm " + form +
                                       " --min 4 --max 300K --step-factor 9 --iters 2 "
                                       "--warmup 1 --json " +
                                       json.string(),
                                   120);
      CAPTURE(transport);
      CAPTURE(form);
      INFO(o.err);
      REQUIRE(o.code == 0);
      std::ifstream in(json);
      const auto rows = nlohmann::json::parse(in);
      REQUIRE(rows.size() == 6);  // 4 B, 36 B, ... 236196 B
      for (const auto& row : rows) CHECK(row.at("wrong").get<long long>() == 0);
    }
}

TEST_CASE("bench allreduce: a bad --algorithm exits 2 naming the flag") {
  struct bad {
    const char* args;
    const char* says;
  };
  for (const bad b : {bad{"--transport shm --algorithm fastest", "--algorithm"},
                      bad{"--transport inproc --algorithm ring", "ring transport"}}) {
    const auto o =
        run_troupe_in(scratch.path, std::string{"bench allreduce --ranks 2 "} + b.args, 60);
    CAPTURE(b.args);
    CHECK(o.code == 2);
    CHECK(o.err.find(b.says) != std::string::npos);
  }
}
