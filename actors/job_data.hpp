#pragma once
// A job's data as its config asks: load (fashion-mnist, idx, csv, synthetic), hold out a test
// set where the source has none, run the preprocessing pipeline (fitted on train, applied to
// both), and the step-addressable sampler that turns a step number into its global batch.
// No actors here: the data_distributor calls these on its own thread.
#include <cstdint>
#include <vector>

#include "actors/payloads.hpp"
#include "core/config.hpp"

namespace troupe::actors {

// Throws troupe::input_error naming the file, dataset or preprocessing step.
data_bundle load_job_data(const config::data_config& cfg, std::uint64_t seed);

// A global permutation per pass, addressed by step: step s of pass p = s / steps_per_pass takes
// positions [(s % steps_per_pass) * B, + B) of that pass's permutation. Any step's batch can be
// recomputed from (seed, step) alone, which is what re-planning a step for survivors (issue 5)
// and resuming from a checkpoint need; it drops the last n % B samples of each pass.
class step_sampler {
 public:
  step_sampler(std::size_t n, std::int64_t batch, std::uint64_t seed);
  std::int64_t steps_per_pass() const { return steps_per_pass_; }
  std::int64_t pass_of(std::int64_t step) const { return step / steps_per_pass_; }
  // The B indices of `step`.
  std::vector<std::int64_t> batch(std::int64_t step);

 private:
  std::size_t n_;
  std::int64_t batch_;
  std::uint64_t seed_;
  std::int64_t steps_per_pass_;
  std::int64_t cached_pass_ = -1;
  std::vector<std::int64_t> perm_;
};

}  // namespace troupe::actors
