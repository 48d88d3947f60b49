// Checkpoints and resume through the embedded runtime: a run stopped at step k
// and resumed from its checkpoint ends with the parameters of the uninterrupted run; a torn or
// corrupt newest checkpoint falls back to the previous one; a checkpoint of another config is
// refused naming the file; no checkpoint means a fresh start.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "actors/runtime.hpp"
#include "core/checkpoint.hpp"
#include "core/config_load.hpp"
#include "core/error.hpp"
#include "core/testing.hpp"
#include "tests/run_support.hpp"

namespace fs = std::filesystem;
using troupe::testing::flip_byte;
using troupe::testing::relative_l2;

namespace {

fs::path scratch(const std::string& name) {
  auto dir =
      fs::temp_directory_path() / ("troupe-resume-test-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(dir);
  return dir;
}

std::string ps(int shards) {
  return "{mode: ps, ps_shards: " + std::to_string(shards) + "}";
}
const std::string allreduce = "{mode: allreduce}";

// The small deterministic MLP of run_support with Adam (so the optimizer state matters), on
// two cpu devices, checkpointing every 10 steps into `ckpt_dir` (none when empty).
std::string config_text(std::int64_t max_steps, const std::string& sync,
                        const std::string& ckpt_dir, const std::string& lr = "0.01") {
  return troupe::testing::with_checkpoints(
      troupe::testing::small_mlp_config(
          "rs", "    - {name: cpu, device: cpu, count: 2, threads: 1, weight: 1.0}\n",
          "{kind: adam, lr: " + lr + "}", sync, max_steps),
      ckpt_dir);
}

troupe::job_report run(const std::string& yaml, const std::string& resume = "") {
  return troupe::testing::run_resumable(yaml, "resume.yaml", resume);
}

// The runs of a resume check of the config `text(steps, checkpoint dir)`: uninterrupted for 60
// steps, a first leg of 30 that checkpoints into `dir`, then `between` (if any), then a second
// leg of 60 resumed from `dir`. Each must complete.
struct legs {
  troupe::job_report full, first, second;
};

legs run_legs(const std::function<std::string(std::int64_t, const std::string&)>& text,
              const fs::path& dir, const std::function<void()>& between = {}) {
  legs l;
  l.full = run(text(60, ""));
  REQUIRE_MESSAGE(l.full.status == troupe::job_status::completed,
                  "uninterrupted: " << l.full.error);
  l.first = run(text(30, dir.string()));
  REQUIRE_MESSAGE(l.first.status == troupe::job_status::completed, "first leg: " << l.first.error);
  if (between) between();
  l.second = run(text(60, dir.string()), dir.string());
  REQUIRE_MESSAGE(l.second.status == troupe::job_status::completed,
                  "second leg: " << l.second.error);
  REQUIRE(l.second.checkpoints.resumed_from_step);
  return l;
}

}  // namespace

TEST_CASE("a run resumed from its step-30 checkpoint ends where the uninterrupted run does") {
  // ps: resumed on three shards instead of two (checkpoints hold the optimizer state of the
  // whole model, not per shard). allreduce: one replica's parameters and optimizer state.
  struct row {
    const char* mode;
    std::string first_sync, second_sync;
  };
  const row rows[] = {{"ps", ps(2), ps(3)}, {"allreduce", allreduce, allreduce}};
  for (const auto& r : rows) {
    CAPTURE(r.mode);
    const auto dir = scratch(std::string("exact-") + r.mode);
    const auto full = run(config_text(60, r.first_sync, ""));
    REQUIRE(full.status == troupe::job_status::completed);
    REQUIRE(full.final_params);

    // First leg: 30 steps with a checkpoint every 10 (kept: 10, 20, 30).
    const auto first = run(config_text(30, r.first_sync, dir.string()));
    INFO("first leg: " << first.error);
    REQUIRE(first.status == troupe::job_status::completed);
    CHECK(first.checkpoints.written == 3);
    CHECK(first.checkpoints.last_step == 30);
    const troupe::checkpoint_store store((dir / "rs").string(), 0);
    REQUIRE(store.list().size() == 3);
    CHECK(store.list().back().step == 30);
    CHECK_FALSE(first.checkpoints.resumed_from_step);

    // Second leg: 60 steps, resumed.
    const auto second = run(config_text(60, r.second_sync, dir.string()), dir.string());
    INFO("second leg: " << second.error);
    REQUIRE(second.status == troupe::job_status::completed);
    REQUIRE(second.checkpoints.resumed_from_step);
    CHECK(*second.checkpoints.resumed_from_step == 30);
    CHECK(second.steps == 60);
    CHECK(second.epochs == full.epochs);
    // Only the resumed steps were computed here: 30 steps of 96 or 80 samples over 2 workers.
    CHECK(second.workers[0].samples + second.workers[1].samples < 31 * 96);
    CHECK(second.workers[0].samples + second.workers[1].samples > 29 * 80);
    const double rel = relative_l2(*second.final_params, *full.final_params);
    MESSAGE(std::string(r.mode) << ": relative L2, resumed vs uninterrupted: " << rel);
    CHECK(rel < 1e-5);
    CHECK(second.params.fnv1a64 == full.params.fnv1a64);
    CHECK(second.train_loss == doctest::Approx(full.train_loss).epsilon(1e-9));
    fs::remove_all(dir);
  }
}

TEST_CASE("a corrupt newest checkpoint is skipped and the previous one used") {
  const auto dir = scratch("corrupt");
  const auto full = run(config_text(40, ps(1), ""));
  REQUIRE(full.status == troupe::job_status::completed);
  const auto first = run(config_text(30, ps(1), dir.string()));
  REQUIRE(first.status == troupe::job_status::completed);
  const troupe::checkpoint_store store((dir / "rs").string(), 0);
  const auto files = store.list();
  REQUIRE(files.size() == 3);
  // Damage the newest (step 30) in its parameter bytes.
  flip_byte(files.back().path, fs::file_size(files.back().path) / 2);
  const auto second = run(config_text(40, ps(1), dir.string()), dir.string());
  INFO(second.error);
  REQUIRE(second.status == troupe::job_status::completed);
  REQUIRE(second.checkpoints.resumed_from_step);
  CHECK(*second.checkpoints.resumed_from_step == 20);
  CHECK(second.params.fnv1a64 == full.params.fnv1a64);

  // A torn newest file (the atomic rename never leaves one; a damaged disk or a copy can) is
  // skipped the same way.
  const auto files2 = store.list();
  REQUIRE(files2.back().step == 40);
  fs::resize_file(files2.back().path, fs::file_size(files2.back().path) - 100);
  const auto third = run(config_text(40, ps(1), dir.string()), dir.string());
  REQUIRE(third.status == troupe::job_status::completed);
  REQUIRE(third.checkpoints.resumed_from_step);
  CHECK(*third.checkpoints.resumed_from_step == 30);
  fs::remove_all(dir);
}

TEST_CASE("a resume with only damaged checkpoints, or a newer format's, is refused") {
  const auto dir = scratch("damaged");
  REQUIRE(run(config_text(20, ps(1), dir.string())).status == troupe::job_status::completed);
  const troupe::checkpoint_store store((dir / "rs").string(), 0);
  const auto files = store.list();
  REQUIRE(files.size() == 2);
  // The newest in another format version (a newer build wrote it): the older valid one is not
  // taken.
  flip_byte(files.back().path, 8);
  const auto newer = run(config_text(30, ps(1), ""), dir.string());
  CHECK(newer.status == troupe::job_status::failed);
  CHECK(newer.bad_input);
  CHECK(newer.steps == 0);
  CAPTURE(newer.error);
  CHECK(newer.error.find(files.back().path) != std::string::npos);
  CHECK(newer.error.find("unsupported format version") != std::string::npos);
  // Every file torn: nothing to resume from, and the job does not start over on its own.
  flip_byte(files.back().path, 8);  // its format version back
  for (const auto& f : files) fs::resize_file(f.path, 100);
  const auto torn = run(config_text(30, ps(1), ""), dir.string());
  CHECK(torn.status == troupe::job_status::failed);
  CHECK(torn.bad_input);
  CHECK(torn.steps == 0);
  CAPTURE(torn.error);
  for (const auto& f : files) CHECK(torn.error.find(f.path + ": truncated") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("a checkpoint of another config is refused; no checkpoint starts fresh") {
  const auto dir = scratch("refuse");
  REQUIRE(run(config_text(10, ps(1), dir.string())).status == troupe::job_status::completed);
  const auto other = run(config_text(20, ps(1), dir.string(), "0.02"), dir.string());
  CHECK(other.status == troupe::job_status::failed);
  CHECK(other.bad_input);
  CAPTURE(other.error);
  CHECK(other.error.find((dir / "rs" / "ckpt-000000010.trp").string()) != std::string::npos);
  CHECK(other.error.find("optimizer.lr") != std::string::npos);

  const auto empty = scratch("empty");
  fs::create_directories(empty);
  const auto fresh = run(config_text(10, ps(1), ""), empty.string());
  CHECK(fresh.status == troupe::job_status::completed);
  CHECK_FALSE(fresh.checkpoints.resumed_from_step);
  CHECK(fresh.steps == 10);
  fs::remove_all(dir);
  fs::remove_all(empty);
}

TEST_CASE("the distributed optimizer form resumes with every worker's moments, exactly") {
  // Each worker's Max-AdaBelief moments are its own: the checkpoint keeps all of them (named by
  // rank) with the one parameter replica, and the resumed run ends with the uninterrupted bits.
  const auto distributed = [](std::int64_t steps, const std::string& dir) {
    auto text = config_text(steps, allreduce, dir);
    text.replace(text.find("kind: adam"), 10, "kind: max-adabelief, form: distributed");
    return text;
  };
  const auto dir = scratch("distributed");
  const auto copy = scratch("distributed-copy");
  const auto [full, first, second] = run_legs(distributed, dir, [&] {
    // The newest checkpoint of the first leg holds both workers' moments.
    const troupe::checkpoint_store store((dir / "rs").string(), 0);
    const auto newest = store.load_newest_valid();
    REQUIRE(newest.loaded);
    for (const char* name : {"opt/rank0/m", "opt/rank0/s", "opt/rank0/s_max", "opt/rank1/m",
                             "opt/rank1/s", "opt/rank1/s_max"})
      CHECK_MESSAGE(newest.loaded->has(name), name);
    fs::create_directories(copy);
    fs::copy(dir, copy, fs::copy_options::recursive);
  });
  CHECK(first.checkpoints.written == 3);
  CHECK(*second.checkpoints.resumed_from_step == 30);
  MESSAGE("relative L2, resumed vs uninterrupted: " << relative_l2(*second.final_params,
                                                                   *full.final_params));
  CHECK(second.params.fnv1a64 == full.params.fnv1a64);
  // On three workers: the third has no moments in the checkpoint and starts from rank 0's, as a
  // worker joining a running job does; the run completes, its replicas equal.
  auto three = distributed(60, copy.string());
  three.replace(three.find("count: 2"), 8, "count: 3");
  const auto wider = run(three, copy.string());
  INFO("on three workers: " << wider.error);
  CHECK(wider.status == troupe::job_status::completed);
  REQUIRE(wider.checkpoints.resumed_from_step);
  CHECK(*wider.checkpoints.resumed_from_step == 30);
  CHECK(wider.steps == 60);
  CHECK(wider.workers.size() == 3);
  CHECK(wider.workers[2].steps == 30);
  fs::remove_all(dir);
  fs::remove_all(copy);
}

TEST_CASE("local SGD checkpoints after averages; resumed, SGD ends where the uninterrupted run") {
  // Period 4: averages after steps 3, 7, 11, ...; a checkpoint is due every 10 steps and waits
  // for the next average: steps 12 and 24 (30 is due 6 steps after 24: not yet).
  const std::string local = "{mode: local, period: 4}";
  const auto sgd = [&](std::int64_t steps, const std::string& dir) {
    auto text = config_text(steps, local, dir);
    text.replace(text.find("{kind: adam, lr: 0.01}"), 22, "{kind: sgd, lr: 0.05}");
    return text;
  };
  const auto dir = scratch("local");
  const auto [full, first, second] = run_legs(sgd, dir);
  CHECK(first.checkpoints.written == 2);
  CHECK(first.checkpoints.last_step == 24);
  CHECK(*second.checkpoints.resumed_from_step == 24);
  // Plain SGD has no optimizer state: every replica resumes exactly.
  CHECK(second.params.fnv1a64 == full.params.fnv1a64);
  // Adam: member 0's moments stand for every replica's, so close, not equal (3% here after 36
  // more steps; the untrained model is 100% away).
  const auto adam_dir = scratch("local-adam");
  const auto adam_full = run(config_text(60, local, ""));
  run(config_text(30, local, adam_dir.string()));
  const auto adam = run(config_text(60, local, adam_dir.string()), adam_dir.string());
  REQUIRE(adam.status == troupe::job_status::completed);
  CHECK(adam.checkpoints.resumed_from_step);
  const double rel = relative_l2(*adam.final_params, *adam_full.final_params);
  MESSAGE("local Adam: relative L2, resumed vs uninterrupted: " << rel);
  CHECK(rel < 0.1);
  fs::remove_all(dir);
  fs::remove_all(adam_dir);
}
