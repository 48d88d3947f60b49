#pragma once
// `data.mode: sharded` plans: every worker owns a shard of the training set and each
// step takes its slice from its own shard, so a device keeps touching the same samples (on
// several hosts: its local data). Between passes, `neighbour_exchange: q` has every worker hand
// a random fraction q of its shard to its ring neighbour (data::sharded_sampler::exchange).
//
// Step-addressable like step_sampler (actors/job/job_data.hpp): a step's indices and per-rank
// counts are a function of (seed, step) and the shard weights fixed at the first plan, so a step
// can be re-planned for survivors and a resumed job continues where it stopped. The layout of pass
// p is the initial cut (by weight) after p exchanges; it is replayed forward from the pass kept, or
// from scratch when a plan asks for an earlier pass.
//
// Counts come from the shard sizes, not from the current split: rank w takes
//   floor((k + 1) |S_w| / P) - floor(k |S_w| / P)
// samples at step k of a pass of P = ceil(n / B) steps, so every shard is used up at the pass's
// last step, every sample exactly once per pass, and a step holds about n / P <= B samples.
// (Exchange moves round(q |S_i|) from each i to i + 1, which pulls unequal shards toward equal
// sizes over many passes: a small q keeps a weighted cut.)
#include <cstddef>
#include <cstdint>
#include <vector>

#include "data/sharded_sampler.hpp"

namespace troupe::actors {

struct shard_step {
  std::vector<std::int64_t> indices;  // rank 0's slice, then rank 1's, ...
  std::vector<std::int64_t> counts;   // by rank
};

class shard_plan {
 public:
  // troupe::input_error for weights split_weighted rejects, or q outside [0, 1).
  shard_plan(std::size_t n, std::int64_t batch, const std::vector<double>& weights,
             std::uint64_t seed, double neighbour_exchange);

  std::int64_t steps_per_pass() const { return steps_per_pass_; }
  std::size_t ranks() const { return weights_.size(); }
  shard_step plan(std::int64_t step);
  // |S_w| in the pass of `step`.
  std::vector<std::size_t> shard_sizes(std::int64_t step);

 private:
  void go_to_pass(std::uint64_t pass);

  std::size_t n_;
  std::int64_t steps_per_pass_;
  std::vector<double> weights_;
  std::uint64_t seed_;
  double q_;
  data::sharded_sampler sampler_;
};

}  // namespace troupe::actors
