// `troupe bench hetero` end to end through the built binary, small (about a minute on 2 cores):
// it must keep running, write its JSON, and its figures must show what the benchmark exists to
// show. The full-size figures are measured by hand (README); this checks the direction with
// loose bounds. They are still speeds measured on a shared host, so it runs with `make bench`.
// ctest-label: perf
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/testing.hpp"
#include "tests/binary_support.hpp"

using namespace troupe::testing;

// The benchmark's JSON and logs go to a directory of this test's own, removed at the end.
const troupe::testing::temp_dir scratch{"troupe-bench-hetero"};

TEST_CASE("bench hetero: a small run writes its figures, and adaptive beats even") {
  const auto json = scratch.path / "hetero.json";
  const auto o = run_troupe_in(scratch.path,
                               "bench hetero --repeats 1 --batch 256 --steps 6 --slow-steps 14 "
                               "--slow-at 3 --solo-steps 3 --json " +
                                   json.string(),
                               300);
  REQUIRE_MESSAGE(o.code == 0, o.err);
  nlohmann::json j;
  std::ifstream(json) >> j;
  CHECK(j.at("pace") == "fixed");
  CHECK(j.at("row_seconds").get<double>() > 0);
  const auto& m = j.at("medians");
  MESSAGE("adaptive eff " << m.at("124/adaptive").at("eff") << " vs even "
                          << m.at("124/adaptive").at("vs_even") << ", reconverge "
                          << m.at("slow/adaptive").value("reconverge", -1.0));
  CHECK(m.at("solo").at("sum").get<double>() > 0);
  // Speeds 1:2:4: an even split leaves the fastest device idle most of each step (4/7 of the
  // work would be its share; it gets 1/3), and adaptive should be near 7/3 = 2.33x even.
  CHECK(m.at("124/even").at("idle_2").get<double>() > 0.4);
  CHECK(m.at("124/adaptive").at("vs_even").get<double>() > 1.5);
  CHECK(m.at("124/adaptive").at("eff").get<double>() > 0.6);
  CHECK(m.at("124/adaptive").at("eff").get<double>() < 1.3);
  // After the fastest device slows down 3x, the adaptive split settles again.
  CHECK(m.at("slow/adaptive").contains("reconverge"));
  CHECK(m.at("slow/adaptive").at("rebalances").get<double>() >= 1);
}

TEST_CASE("bench hetero: a bad --pace exits 2 naming the flag") {
  const auto o = run_troupe_in(scratch.path, "bench hetero --pace warp", 300);
  CHECK(o.code == 2);
  CHECK(o.err.find("--pace") != std::string::npos);
}
