// `troupe bench chaos` through the built binary: bad input exits 2 naming what is wrong before
// anything runs, and faults that keep coming (kills and stops of child agents) lose no step and
// count no sample twice or never. Goodput is a figure the bench prints, not asserted here.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/binary_support.hpp"

namespace fs = std::filesystem;
using namespace troupe::testing;

namespace {

fs::path scratch() {
  return scratch_dir("troupe-bench-chaos-test");
}

// Two child agents and a device in this process; about 10 s of steps (the agents' devices take
// a fixed 0.5 ms a sample), so that the faults land while the job runs.
const char* config =
    "cluster:\n"
    "  groups:\n"
    "    - {name: a, device: sim, base: cpu, row_seconds: 0.0005, count: 1, threads: 1,\n"
    "       process: separate}\n"
    "    - {name: b, device: sim, base: cpu, row_seconds: 0.0005, count: 1, threads: 1,\n"
    "       process: separate}\n"
    "    - {name: solo, device: cpu, count: 1, threads: 1}\n"
    "jobs:\n"
    "  - name: chaos\n"
    "    model: {kind: mlp, hidden: [32]}\n"
    "    data: {dataset: synthetic, synthetic: {kind: blobs, samples: 4000}}\n"
    "    optimizer: {kind: sgd, lr: 0.05}\n"
    "    batch: 64\n"
    "    max_steps: 600\n"
    "    epochs: 100\n"
    "    supervision: {crash: restart, hang: restart, lost-group: restart}\n"
    "    seed: 5\n"
    "    deterministic: true\n";

// `troupe bench chaos ARGS`, which must exit 0: its output from the first run's row on.
std::istringstream first_row(const std::string& args, int timeout_s) {
  const auto o = run_troupe_in(scratch(), "bench chaos " + args, timeout_s);
  const auto out = read_file(scratch() / "stdout.txt");
  CAPTURE(out);
  CAPTURE(o.err);
  REQUIRE(o.code == 0);
  const auto row_at = out.find("\n1 ");
  REQUIRE(row_at != std::string::npos);
  return std::istringstream(out.substr(row_at + 1));
}

}  // namespace

TEST_CASE("troupe bench chaos: bad input exits 2 naming the flag or the file; nothing runs") {
  const auto good = write_file(scratch(), "chaos.yaml", config).string();
  struct bad_case {
    std::string args, says;
  };
  const bad_case cases[] = {
      {good + " --kinds kill,flood", "unknown fault kind 'flood'"},
      {good + " --rate 0", "--rate"},
      {good + " --rate -3", "--rate"},
      {good + " --rate fast", "--rate"},
      {good + " --seconds 0", "--seconds"},
      {good + " --kinds ''", "--kinds"},
      {"/nonexistent/chaos.yaml", "/nonexistent/chaos.yaml"},
      {good + " --set jobs.0.batch=-1", "batch"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    const auto o = run_troupe_in(scratch(), "bench chaos " + c.args, 60);
    CAPTURE(o.err);
    CHECK(o.code == 2);
    CHECK(o.err.find(c.says) != std::string::npos);
    CHECK(read_file(scratch() / "stdout.txt").find("median goodput") == std::string::npos);
  }
  // No separate group: nothing to fault.
  auto none = std::string(config);
  for (auto at = none.find("process: separate"); at != std::string::npos;
       at = none.find("process: separate"))
    none.replace(at, 17, "process: local");
  const auto o = run_troupe_in(
      scratch(), "bench chaos " + write_file(scratch(), "none.yaml", none).string(), 60);
  CHECK(o.code == 2);
  CHECK(o.err.find("process: separate") != std::string::npos);
}

TEST_CASE("troupe bench chaos: kills and stops that keep coming lose no step and no sample") {
  const auto path = write_file(scratch(), "chaos.yaml", config).string();
  // Run 1: run drawn faults kill stop part failures clean_s chaos_s goodput lost twice never
  auto row = first_row(path + " --rate 120 --kinds kill,stop --seconds 30 --seed 3", 300);
  const auto& out = row.str();
  int run = 0, drawn = 0, faults = 0, kills = 0, stops = 0, parts = 0;
  long long failures = 0, lost = -1, twice = -1, never = -1;
  double clean_s = 0, chaos_s = 0, goodput = 0;
  row >> run >> drawn >> faults >> kills >> stops >> parts >> failures >> clean_s >> chaos_s >>
      goodput >> lost >> twice >> never;
  REQUIRE(row);
  CHECK(faults >= 1);
  CHECK(drawn >= faults);
  CHECK(faults == kills + stops);
  CHECK(parts == 0);
  CHECK(failures >= 1);  // the job saw them
  CHECK(lost == 0);
  CHECK(twice == 0);
  CHECK(never == 0);
  CHECK(out.find("worst lost_steps 0; samples counted twice 0, never 0") != std::string::npos);
}

TEST_CASE("troupe bench chaos --kinds control: the control process killed again and again") {
  // The job in this process only (sim devices of a fixed 0.5 ms a sample: 600 steps last about
  // 20 s however fast the host is, so kills at 2 a second land); checkpoints every 25 steps.
  std::string local = config;
  for (auto at = local.find("process: separate"); at != std::string::npos;
       at = local.find("process: separate"))
    local.replace(at, 17, "process: local");
  const auto path = write_file(scratch(), "control.yaml", local).string();
  CHECK(run_troupe_in(scratch(), "bench chaos " + path + " --kinds control,kill", 60).code == 2);
  // run kills clean_s chaos_s goodput redone lost twice never passes fnv
  auto row = first_row(path + " --kinds control --rate 120 --seconds 10 --seed 4", 600);
  int run = 0, kills = 0;
  double clean_s = 0, chaos_s = 0, goodput = 0;
  long long redone = -1, lost = -1, twice = -1, never = -1, passes = -1;
  std::string fnv;
  row >> run >> kills >> clean_s >> chaos_s >> goodput >> redone >> lost >> twice >> never >>
      passes >> fnv;
  REQUIRE(row);
  CHECK(kills >= 1);
  // A kill costs at most the steps since the newest durable checkpoint (a step waits for a
  // checkpoint still being written): one interval of 25.
  CHECK(redone >= 0);
  CHECK(redone <= 25LL * kills);
  CHECK(lost == 0);
  // Every pass of the job (600 steps of 64 over 3,200 training samples: 12 passes), across the
  // killed runs and the one that completed, each sample once.
  CHECK(passes == 12);
  CHECK(twice == 0);
  CHECK(never == 0);
  // Deterministic ps (the canonical reduction) resumed from checkpoints: the fault-free bits.
  CHECK(fnv == "same");
}
