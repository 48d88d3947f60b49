// Virtual shares end to end: two jobs on one `shared` sim device. With `cluster.shares: fixed`
// and `share` keys 3 and 1, the device's compute time while both run must split 3:1 (within
// 10%); with `adaptive`, the share_allocator must move the share toward the job with the higher
// goodput. Both are measured compute times, so this runs with `make bench`; the share
// arithmetic itself is unit-tested in policies/shares and actors/tasks/share_allocator.
// ctest-label: perf
#include <doctest/doctest.h>

#include <cstdlib>
#include <map>
#include <string>

#include "actors/runtime.hpp"
#include "core/config_load.hpp"
#include "devices/cuda_info.hpp"

namespace {

// Both jobs run for the same wall time (max_seconds) and start together, so nearly all of their
// compute happens while both contend for the device.
std::string two_jobs(const std::string& shares, const std::string& hidden_a,
                     const std::string& hidden_b, double share_a, double share_b) {
  auto job = [](const std::string& name, const std::string& hidden, double share) {
    return "  - name: " + name +
           "\n"
           "    model: {kind: mlp, hidden: " +
           hidden +
           "}\n"
           "    data: {dataset: synthetic, synthetic: {kind: blobs, samples: 4096}}\n"
           "    optimizer: {kind: sgd, lr: 0.05}\n"
           "    batch: 128\n"
           "    epochs: 1000\n"
           "    max_seconds: 3\n"
           "    share: " +
           std::to_string(share) + "\n";
  };
  return "cluster:\n  shares: " + shares +
         "\n  share_period: 0.3\n  groups:\n"
         "    - {name: gpu, device: sim, base: cpu, slowdown: 3, count: 1, threads: 1, weight: 1, "
         "shared: true}\n"
         "jobs:\n" +
         job("a", hidden_a, share_a) + job("b", hidden_b, share_b);
}

// Two jobs on one shared real GPU: a CNN wide enough, at a batch big enough, that each call is
// GPU work rather than the host's copies and control (the gate can only divide time that both
// jobs want). Fashion-MNIST from TROUPE_FASHION_MNIST, else Debian's path.
std::string two_gpu_jobs(double share_a, double share_b) {
  const char* env = std::getenv("TROUPE_FASHION_MNIST");
  const std::string path = env ? env : "/usr/share/datasets/fashion-mnist";
  auto job = [&](const std::string& name, double share) {
    return "  - name: " + name +
           "\n"
           "    model: {kind: cnn, hidden: [64, 128, 256]}\n"
           "    data: {dataset: fashion-mnist, path: " +
           path +
           ", preprocess: [normalize]}\n"
           "    optimizer: {kind: sgd, lr: 0.01}\n"
           "    batch: 2048\n"
           "    epochs: 1000\n"
           "    max_seconds: 4\n"
           "    share: " +
           std::to_string(share) + "\n";
  };
  return "cluster:\n  shares: fixed\n  groups:\n"
         "    - {name: gpu, device: cuda, count: 1, weight: 1, shared: true}\n"
         "jobs:\n" +
         job("a", share_a) + job("b", share_b);
}

std::map<std::string, troupe::job_report> run(const std::string& yaml) {
  troupe::runtime_options opts;
  opts.wait_seconds = 120;  // a deadline, never a hang
  opts.step_deadline_seconds = 60;
  troupe::runtime rt(troupe::config::parse_config(yaml, "shares.yaml"), opts);
  auto report = rt.run();
  std::map<std::string, troupe::job_report> out;
  for (const auto& j : report.jobs) {
    INFO(j.name << " error: " << j.error);
    REQUIRE(j.status == troupe::job_status::completed);
    REQUIRE(j.workers.size() == 1);
    out[j.name] = j;
  }
  REQUIRE(out.size() == 2);
  return out;
}

}  // namespace

TEST_CASE("fixed shares 3:1 on one shared sim device: compute time splits 3:1 within 10%") {
  const auto r = run(two_jobs("fixed", "[128]", "[128]", 3.0, 1.0));
  const double a = r.at("a").workers[0].compute_seconds, b = r.at("b").workers[0].compute_seconds;
  const double ratio = a / b;
  MESSAGE("compute seconds a " << a << " b " << b << " ratio " << ratio << " steps a "
                               << r.at("a").steps << " b " << r.at("b").steps);
  CHECK(ratio == doctest::Approx(3.0).epsilon(0.10));
  // Both really ran on the device: 3 s each, slowdown 3.
  CHECK(a + b > 1.0);
  REQUIRE(r.at("a").share.has_value());
  CHECK(*r.at("a").share == doctest::Approx(0.75));
  CHECK(*r.at("b").share == doctest::Approx(0.25));
  CHECK(r.at("a").share_changes == 0);
}

TEST_CASE("fixed shares 3:1 on one real GPU: its time splits 3:1 within 10%") {
  if (troupe::devices::cuda_device_count() == 0) {
    MESSAGE("no GPU visible: nothing to measure");
    return;
  }
  const auto r = run(two_gpu_jobs(3.0, 1.0));
  const double a = r.at("a").workers[0].compute_seconds, b = r.at("b").workers[0].compute_seconds;
  MESSAGE("GPU seconds a " << a << " b " << b << " ratio " << a / b << " steps a "
                           << r.at("a").steps << " b " << r.at("b").steps);
  CHECK(a / b == doctest::Approx(3.0).epsilon(0.10));
  CHECK(r.at("a").workers[0].device == "cuda");
}

TEST_CASE("adaptive shares move toward the job with the higher goodput") {
  // Equal `share` keys; job a's model is ~25x cheaper per sample, so it turns its share into far
  // more samples/s (goodput; the noise scale is unknown with one worker, so E = 1 for both). Both
  // models are big enough that device time, not control overhead, sets the pace.
  const auto r = run(two_jobs("adaptive", "[256]", "[512, 512]", 1.0, 1.0));
  REQUIRE(r.at("a").share.has_value());
  REQUIRE(r.at("b").share.has_value());
  MESSAGE("final shares a " << *r.at("a").share << " b " << *r.at("b").share << " decisions a "
                            << r.at("a").share_changes);
  CHECK(*r.at("a").share > 0.6);
  CHECK(*r.at("a").share + *r.at("b").share == doctest::Approx(1.0));
  CHECK(r.at("a").share_changes >= 2);     // the join and at least one move
  CHECK(*r.at("b").share >= 0.05 - 1e-9);  // the floor
}
