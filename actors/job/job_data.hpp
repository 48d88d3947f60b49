#pragma once
// A job's data as its config asks: load (fashion-mnist, idx, csv, synthetic), hold out a test
// set where the source has none, run the preprocessing pipeline (fitted on train, applied to
// both), and the step-addressable sampler that turns a step number into its global batch.
// No actors here: the data_distributor calls these on its own thread.
#include <cstdint>
#include <vector>

#include "actors/common/payloads.hpp"
#include "core/config.hpp"
#include "data/sampler.hpp"

namespace troupe::actors {

// Throws troupe::input_error naming the file, dataset or preprocessing step.
data_bundle load_job_data(const config::data_config& cfg, std::uint64_t seed);

// data::epoch_sampler addressed by step number: step s of pass p = s / steps_per_pass takes the
// B indices at position (s % steps_per_pass) * B of that pass's permutation, the last step of a
// pass shortened to what is left, so every sample is used exactly once per pass. Any step's
// batch can be recomputed from (seed, step) alone, which is what re-planning a step for
// survivors and resuming from a checkpoint need.
class step_sampler {
 public:
  step_sampler(std::size_t n, std::int64_t batch, std::uint64_t seed);
  // ceil(n / batch): the steps of one pass over n samples.
  static std::int64_t steps_per_pass(std::size_t n, std::int64_t batch);
  std::int64_t steps_per_pass() const { return steps_per_pass_; }
  std::int64_t pass_of(std::int64_t step) const { return step / steps_per_pass_; }
  // The indices of `step`: B of them, fewer for the last step of a pass.
  std::vector<std::int64_t> batch(std::int64_t step) const;

 private:
  data::epoch_sampler sampler_;
  std::int64_t batch_;
  std::int64_t steps_per_pass_;
};

}  // namespace troupe::actors
