// The step protocol's promise: because workers send gradient SUMS and the shards
// divide by the total sample count, a global batch split over heterogeneous workers trains the
// same model as one worker taking the whole batch; and deterministic mode repeats bit for bit.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "actors/runtime.hpp"
#include "core/config_load.hpp"
#include "tests/run_support.hpp"

namespace {

using troupe::testing::relative_l2;

troupe::job_report run_one(const std::string& yaml) {
  return troupe::testing::run_one(yaml, "equivalence.yaml", 50);
}

// 50 steps of a small MLP on synthetic blobs; `groups` is the YAML of cluster.groups.
std::string config_text(const std::string& groups, const std::string& optimizer, int shards,
                        const std::string& split) {
  return "cluster:\n  groups:\n" + groups +
         "jobs:\n"
         "  - name: eq\n"
         "    model: {kind: mlp, hidden: [32, 16]}\n"
         "    data:\n"
         "      dataset: synthetic\n"
         "      synthetic: {kind: blobs, samples: 2500}\n"
         "      preprocess: [standardize]\n"
         "      split: " +
         split +
         "\n"
         "    optimizer: " +
         optimizer +
         "\n"
         "    batch: 96\n"
         "    epochs: 3\n"
         "    max_steps: 50\n"
         "    sync: {mode: ps, block: 8, ps_shards: " +
         std::to_string(shards) +
         "}\n"
         "    seed: 7\n"
         "    deterministic: true\n";
}

const std::string three_workers =
    "    - {name: cpu, device: cpu, count: 2, threads: 1, weight: 1.0}\n"
    "    - {name: slow, device: sim, base: cpu, slowdown: 2, count: 1, threads: 1, weight: 0.5}\n";
const std::string one_worker = "    - {name: solo, device: cpu, count: 1, threads: 1}\n";

}  // namespace

TEST_CASE("three heterogeneous workers with a weighted split train the same model as one") {
  for (const std::string opt : {"{kind: sgd, lr: 0.05}", "{kind: adam, lr: 0.01}"}) {
    CAPTURE(opt);
    const auto split = run_one(config_text(three_workers, opt, 2, "weighted"));
    const auto solo = run_one(config_text(one_worker, opt, 1, "weighted"));
    // The split really was heterogeneous: weights 1 : 1 : 0.5 of 12 blocks of 8 are 5, 5 and 2
    // blocks (40 + 40 + 16), and of the short step's 10 blocks 4, 4 and 2.
    REQUIRE(split.workers.size() == 3);
    CHECK(split.workers[0].mean_batch == doctest::Approx((48 * 40 + 2 * 32) / 50.0));
    CHECK(split.workers[2].mean_batch == doctest::Approx(16.0));
    REQUIRE(solo.workers.size() == 1);
    // 2000 training samples (2500 less the 20% hold-out) in steps of 96: 20 full steps and one
    // of 80 per pass (every sample exactly once per pass), so 50 steps cross two pass ends.
    CHECK(solo.workers[0].samples == 48 * 96 + 2 * 80);
    // Training moved the parameters: the comparison is not between two initialisations.
    CHECK(split.train_loss < 1.0);
    const double rel = relative_l2(*split.final_params, *solo.final_params);
    MESSAGE("relative L2 (" << opt << "): " << rel);
    CHECK(rel < 1e-5);
    // The canonical reduction (deterministic ps): three workers give one worker's bits, since
    // the same blocks are summed in the same order whoever computed them.
    CHECK(split.params.fnv1a64 == solo.params.fnv1a64);
  }
}

TEST_CASE("deterministic mode repeats bit for bit") {
  // No config weights: deterministic mode takes the devices' capability estimates, not a
  // measured probe, so the split (and every float sum) is the same in both runs.
  const std::string groups =
      "    - {name: cpu, device: cpu, count: 2, threads: 1}\n"
      "    - {name: slow, device: sim, base: cpu, slowdown: 2, count: 1, threads: 1}\n";
  const auto text = config_text(groups, "{kind: adam, lr: 0.01}", 3, "weighted");
  const auto a = run_one(text);
  const auto b = run_one(text);
  CHECK(a.params.fnv1a64 == b.params.fnv1a64);
  CHECK(*a.final_params == *b.final_params);
  CHECK(a.test_accuracy == b.test_accuracy);
  // The slow device got about half a fast device's share.
  CHECK(a.workers[2].mean_batch < a.workers[0].mean_batch * 0.7);
}
