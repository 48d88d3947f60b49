// A checkpoint resumes on a cluster of another shape: fewer or more groups, other device counts
// and kinds. The global batch stays the job's, every sample of the interrupted pass is trained
// once across the two runs (counted by the sample ledger the checkpoint carries), the report
// names the old membership, and in ps mode the resumed parameters are the ones any resume from
// that checkpoint on the new shape reaches.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "actors/runtime.hpp"
#include "core/checkpoint.hpp"
#include "core/config_load.hpp"
#include "tests/run_support.hpp"

namespace fs = std::filesystem;
using troupe::testing::relative_l2;

namespace {

fs::path scratch(const std::string& name) {
  auto dir = fs::temp_directory_path() /
             ("troupe-resume-shape-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(dir);
  return dir;
}

// Group lines: three groups of four devices, two groups of two, four groups of five.
const std::string three_groups =
    "    - {name: a, device: cpu, count: 1, threads: 1, weight: 1.0}\n"
    "    - {name: b, device: sim, base: cpu, slowdown: 2, count: 1, threads: 1, weight: 0.5}\n"
    "    - {name: c, device: cpu, count: 2, threads: 1, weight: 1.0}\n";
const std::string two_groups =
    "    - {name: a, device: cpu, count: 1, threads: 1, weight: 1.0}\n"
    "    - {name: b, device: sim, base: cpu, slowdown: 2, count: 1, threads: 1, weight: 0.5}\n";
const std::string four_groups =
    "    - {name: a, device: cpu, count: 2, threads: 1, weight: 1.0}\n"
    "    - {name: b, device: sim, base: cpu, slowdown: 2, count: 1, threads: 1, weight: 0.5}\n"
    "    - {name: c, device: cpu, count: 1, threads: 1, weight: 2.0}\n"
    "    - {name: d, device: sim, base: cpu, slowdown: 3, count: 1, threads: 1, weight: 0.3}\n";

struct mode_row {
  const char* name;
  std::string sync;
  std::string optimizer;
};
// Local SGD checkpoints at its averages; at period 1 that is every step. Plain SGD there: with
// Adam, member 0's moments stand for every replica's.
const mode_row modes[] = {
    {"ps", "{mode: ps, ps_shards: 2}", "{kind: adam, lr: 0.01}"},
    {"allreduce", "{mode: allreduce}", "{kind: adam, lr: 0.01}"},
    {"local", "{mode: local, period: 1}", "{kind: sgd, lr: 0.05}"},
};

std::string config_text(const std::string& groups, const mode_row& m, std::int64_t max_steps,
                        const std::string& ckpt_dir) {
  return troupe::testing::with_checkpoints(
      troupe::testing::small_mlp_config("shape", groups, m.optimizer, m.sync, max_steps), ckpt_dir);
}

// A run that must complete.
troupe::job_report run(const std::string& yaml, const std::string& resume = "") {
  auto j = troupe::testing::run_resumable(yaml, "shape.yaml", resume);
  INFO("error: " << j.error);
  REQUIRE(j.status == troupe::job_status::completed);
  return j;
}

std::int64_t samples_of(const troupe::job_report& j) {
  std::int64_t n = 0;
  for (const auto& w : j.workers) n += w.samples;
  return n;
}

}  // namespace

TEST_CASE("a checkpoint resumes on fewer and on more groups, every sample trained once") {
  struct shape_row {
    const char* name;
    const std::string& before;
    const std::string& after;
    std::size_t workers_before, workers_after;
  };
  const shape_row shapes[] = {{"3 groups -> 2", three_groups, two_groups, 4, 2},
                              {"2 groups -> 4", two_groups, four_groups, 2, 5}};
  for (const auto& m : modes) {
    for (const auto& sh : shapes) {
      const std::string what = std::string(m.name) + ", " + sh.name;
      CAPTURE(what);
      const auto dir = scratch(std::string(m.name) + "-" + std::to_string(sh.workers_after));
      // The uninterrupted run on the first shape, and its first 30 steps alone: what the
      // resumed 30 steps must add up to.
      const auto full = run(config_text(sh.before, m, 60, ""));
      const auto first30 = run(config_text(sh.before, m, 30, ""));
      REQUIRE(full.samples);
      REQUIRE(first30.samples);

      // Interrupted: 37 steps with checkpoints at 10, 20, 30; steps 31-36 are lost. Step 30
      // lies inside the second pass (21 steps a pass here).
      const auto first = run(config_text(sh.before, m, 37, dir.string()));
      REQUIRE(first.checkpoints.last_step == 30);
      REQUIRE(first.workers.size() == sh.workers_before);
      // A copy of the checkpoint, for a second resume that nothing interrupted.
      const auto copy = scratch(std::string(m.name) + "-copy-" + std::to_string(sh.workers_after));
      fs::create_directories(copy);
      fs::copy(dir, copy, fs::copy_options::recursive);

      const auto second = run(config_text(sh.after, m, 60, dir.string()), dir.string());
      REQUIRE(second.checkpoints.resumed_from_step);
      CHECK(*second.checkpoints.resumed_from_step == 30);
      CHECK(second.steps == 60);
      CHECK(second.workers.size() == sh.workers_after);
      // The report says what changed: the old members, the new ones in `workers`.
      CHECK(second.checkpoints.resumed_members.size() == sh.workers_before);
      CHECK(second.checkpoints.resumed_members.front() == "a/0 cpu");
      // The same global batch: the resumed steps trained what the first shape's steps 30-59 did.
      CHECK(second.global_batch == full.global_batch);
      CHECK(samples_of(second) == samples_of(full) - samples_of(first30));
      REQUIRE(second.samples);
      CHECK(second.samples->recorded == samples_of(second));
      // Pass 1 (steps 21-41) began before the checkpoint and ended in the resumed run: each of
      // its samples counted once across the two runs.
      CHECK(second.samples->passes_checked == 1);
      // Pass 0 ended in the first run, before its step-30 checkpoint, which carries its verdict.
      CHECK(second.samples->earlier_passes_checked == 1);
      CHECK(second.samples->earlier_counted_twice == 0);
      CHECK(second.samples->earlier_never_counted == 0);
      CHECK(second.samples->counted_twice == 0);
      CHECK(second.samples->never_counted == 0);
      CHECK(full.samples->passes_checked == 2);
      CHECK(full.samples->counted_twice == 0);
      CHECK(full.samples->never_counted == 0);
      const double rel = relative_l2(*second.final_params, *full.final_params);
      MESSAGE(what << ": relative L2 to the first shape's run: " << rel);
      // The same samples in the same steps; only the order of the sums differs with the shape.
      CHECK(rel < 1e-4);
      if (std::string(m.name) == "ps") {
        // Deterministic: the parameters of a fault-free resume on the new shape.
        const auto again = run(config_text(sh.after, m, 60, copy.string()), copy.string());
        CHECK(again.params.fnv1a64 == second.params.fnv1a64);
      }
      // The canonical reduction's blocks do not depend on the shape: in ps and allreduce (every
      // replica here) the run that changed shape ends with the bits of the one that never did.
      if (std::string(m.name) != "local") CHECK(second.params.fnv1a64 == full.params.fnv1a64);
      fs::remove_all(dir);
      fs::remove_all(copy);
    }
  }
}
