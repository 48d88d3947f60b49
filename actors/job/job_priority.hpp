#pragma once
// `data.priority: {alpha, beta}`: the data distributor's per-sample scores and each step's
// prioritised draw (policies/data_priority.hpp has the formulas). No actors here.
//
// Each step draws B indices WITH replacement, P_i proportional to score_i^alpha (plus the
// policy's small uniform floor), score_i = the sample's last reported loss boosted by its
// staleness (steps since it was last seen; horizon = one pass), never-seen samples at the largest
// known loss. Each drawn index carries its importance weight (N P_i)^-beta / sum_k P_k (N
// P_k)^-beta (expectation 1 under P), which the worker multiplies into that sample's loss gradient;
// beta = 1 makes the gradient an unbiased estimate of the uniform one. Workers report each sample's
// unweighted loss back (sample_losses), which becomes its score from then on.
//
// Epochs: sampling with replacement no longer visits each sample once per pass, so a pass is
// counted as ceil(N / B) steps of B draws (N samples drawn), the same step count as uniform
// sampling; every step has the full batch B.
//
// A step's draw depends on (seed, step) and on the losses reported so far, so it is reproducible
// only as far as the loss reports arrive in the same order (deterministic runs, one worker).
#include <cstdint>
#include <vector>

#include "actors/common/messages.hpp"
#include "core/config.hpp"
#include "policies/data_priority.hpp"

namespace troupe::actors {

class priority_plan {
 public:
  priority_plan(std::size_t n, std::int64_t batch, const config::priority_config& cfg,
                std::uint64_t seed);
  // The B indices of `step` with their normalised importance weights.
  msg::index_list draw(std::int64_t step) const;
  // Losses reported for samples computed in `step`.
  void observe(std::int64_t step, const std::vector<std::int64_t>& indices,
               const std::vector<float>& losses);

 private:
  std::int64_t batch_;
  std::uint64_t seed_;
  policies::priority_options options_;
  std::vector<double> loss_;       // NaN: never seen
  std::vector<double> last_seen_;  // step; -1: never
};

}  // namespace troupe::actors
