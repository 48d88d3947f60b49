// The cuda device in whole jobs, where a GPU is visible (each case says so and returns where
// none is): a GPU worker beside two CPU workers trains the same model as one CPU worker, and the
// GPU's real failures (out of memory, a refused kernel launch) are classified and handled by
// their supervision policy.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "devices/cuda_info.hpp"
#include "tests/run_support.hpp"

namespace {

using troupe::testing::relative_l2;
using troupe::testing::small_mlp_config;

std::string classes(const troupe::job_report& r) {
  std::ostringstream out;
  for (const auto& [k, n] : r.faults.failures_by_class) out << k << "=" << n << " ";
  out << "restarts=" << r.faults.restarts << " migrations=" << r.faults.migrations;
  for (double ms : r.faults.detect_ms) out << " detect_ms=" << ms;
  return out.str();
}

bool have_gpu() {
  if (troupe::devices::cuda_device_count() > 0) return true;
  MESSAGE("no GPU visible (CUDA compiled in: " << troupe::devices::cuda_compiled()
                                               << "): nothing to run");
  return false;
}

const std::string gpu_and_cpus =
    "    - {name: gpu, device: cuda, count: 1, weight: 2.0}\n"
    "    - {name: cpu, device: cpu, count: 2, threads: 1, weight: 1.0}\n";
const std::string one_cpu = "    - {name: solo, device: cpu, count: 1, threads: 1}\n";

// Blocks of 16 samples for the canonical reduction (deterministic: true): a batch of 96 is 6
// blocks, so the weights 2:1:1 can give the GPU its half (3 blocks); with the default 32 it
// would be 3 blocks, one a worker, whatever the weights.
troupe::job_report run(const std::string& groups, const std::string& optimizer,
                       const std::string& faults = "") {
  return troupe::testing::run_one(
      small_mlp_config("gpu", groups, optimizer, "{mode: ps, ps_shards: 1, block: 16}", 60, faults),
      "gpu.yaml", 60);
}

}  // namespace

TEST_CASE("one cuda worker and two cpu workers train the same model as one cpu worker") {
  if (!have_gpu()) return;
  for (const std::string opt : {"{kind: sgd, lr: 0.05}", "{kind: adam, lr: 0.01}"}) {
    CAPTURE(opt);
    const auto mixed = run(gpu_and_cpus, opt);
    const auto solo = run(one_cpu, opt);
    REQUIRE(mixed.workers.size() == 3);
    // The GPU took its weighted half of every batch of 96.
    CHECK(mixed.workers[0].mean_batch == doctest::Approx(48.0).epsilon(0.05));
    CHECK(mixed.workers[0].device == "cuda");
    CHECK(mixed.train_loss < 1.0);
    const double rel = relative_l2(*mixed.final_params, *solo.final_params);
    MESSAGE("relative L2, cuda + 2 cpu against 1 cpu (" << opt << "): " << rel);
    CHECK(rel < 1e-5);
  }
}

TEST_CASE("a GPU worker with its first layer on the CPU trains the same model too") {
  if (!have_gpu()) return;
  const std::string split =
      "    - {name: gpu, device: cuda, count: 1, weight: 2.0, layer_split: 1}\n"
      "    - {name: cpu, device: cpu, count: 2, threads: 1, weight: 1.0}\n";
  const auto mixed = run(split, "{kind: adam, lr: 0.01}");
  const auto solo = run(one_cpu, "{kind: adam, lr: 0.01}");
  const double rel = relative_l2(*mixed.final_params, *solo.final_params);
  MESSAGE("relative L2, layer split (1 layer on the CPU) + 2 cpu against 1 cpu: " << rel);
  CHECK(rel < 1e-5);
}

namespace {

// A GPU failure at step 20: one failure of `cls`, the worker migrated, the model unchanged.
void check_failover(const std::string& action, const std::string& cls) {
  const auto base = run(gpu_and_cpus, "{kind: adam, lr: 0.01}");
  const auto r = run(gpu_and_cpus, "{kind: adam, lr: 0.01}",
                     "      - {step: 20, action: " + action + ", target: gpu/0}\n");
  MESSAGE(classes(r));
  CHECK(r.faults.injected == 1);
  CHECK(r.faults.failures_by_class.at(cls) == 1);
  CHECK(r.faults.migrations == 1);
  CHECK(r.faults.lost_steps == 0);
  CHECK(relative_l2(*r.final_params, *base.final_params) < 1e-5);
  // The GPU did the first 20 steps, then none.
  CHECK(r.workers[0].steps >= 20);
  CHECK(r.workers[0].steps < 60);
}

}  // namespace

TEST_CASE("the GPU running out of memory is an out-of-memory failure; the job goes on") {
  if (!have_gpu()) return;
  check_failover("oom", "out-of-memory");
}

TEST_CASE("a refused kernel launch is a device-error failure; the job finishes on the CPUs") {
  if (!have_gpu()) return;
  check_failover("device-error", "device-error");
}
