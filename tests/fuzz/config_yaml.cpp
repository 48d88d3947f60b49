// Fuzz target: the YAML config loader (core/config_load.hpp), fed as `troupe run` reads a
// config file, as `troupe serve` reads its cluster file and as it reads a submitted jobs file.
// A line starting with "#set " also gives a --set override (the rest of the line): a YAML
// comment, so that the seeds stay plain config files while the fuzzer reaches the overrides.
//
// A bad config must end in troupe::input_error (exit 2 with a message); any other exception, a
// crash, a sanitizer report or a hang is a bug.
#include <string>
#include <vector>

#include "core/config_load.hpp"
#include "core/error.hpp"
#include "tests/fuzz/fuzz_target.hpp"

namespace {

using namespace troupe;

// A service's cluster for the jobs-only form: every device kind and process kind, so that a
// submitted file's resources, faults and process rules have something to meet.
const config::cluster_config& service_cluster() {
  static const config::cluster_config cluster = config::parse_cluster(R"(cluster:
  groups:
    - {name: cpu, device: cpu, count: 2}
    - {name: slow, device: sim, base: cpu, slowdown: 3}
    - {name: gpu, device: cuda, count: 1}
    - {name: east, device: cpu, process: agent}
  shares: adaptive
)",
                                                                      "service-cluster.yaml");
  return cluster;
}

std::vector<std::string> sets_in(const std::string& text) {
  std::vector<std::string> sets;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    if (text.compare(at, 5, "#set ") == 0) sets.push_back(text.substr(at + 5, end - at - 5));
    at = end + 1;
  }
  return sets;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto sets = sets_in(text);
  fuzz::refused_as<input_error>([&] { config::parse_config(text, "fuzz.yaml", sets); });
  fuzz::refused_as<input_error>([&] { config::parse_cluster(text, "fuzz.yaml"); });
  fuzz::refused_as<input_error>([&] {
    config::parse_jobs(text, "fuzz.yaml", sets, service_cluster(), {"mlp-1", "softmax-2"},
                       "/nonexistent/troupe-fuzz/checkpoints");
  });
  return 0;
}
