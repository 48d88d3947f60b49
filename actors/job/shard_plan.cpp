#include "actors/job/shard_plan.hpp"

#include <string>

#include "actors/job/job_data.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"

namespace troupe::actors {

shard_plan::shard_plan(std::size_t n, std::int64_t batch, const std::vector<double>& weights,
                       std::uint64_t seed, double neighbour_exchange)
    : n_(n),
      steps_per_pass_(step_sampler::steps_per_pass(n, batch)),
      weights_(weights),
      seed_(seed),
      q_(neighbour_exchange),
      sampler_(n, weights, seed) {
  if (!(q_ >= 0.0 && q_ < 1.0))
    throw input_error("data.neighbour_exchange must be in [0, 1), got " + std::to_string(q_));
}

void shard_plan::go_to_pass(std::uint64_t pass) {
  if (pass < sampler_.epoch()) sampler_ = data::sharded_sampler(n_, weights_, seed_);
  while (sampler_.epoch() < pass) {
    if (q_ > 0.0) {
      // One stream per pass boundary: the exchange after pass p is the same however we got here.
      rng r(seed_ ^ (0x9e3779b97f4a7c15ULL * (sampler_.epoch() + 1)));
      sampler_.exchange(q_, r);
    } else {
      sampler_.new_epoch();
    }
  }
}

std::vector<std::size_t> shard_plan::shard_sizes(std::int64_t step) {
  go_to_pass(static_cast<std::uint64_t>(step / steps_per_pass_));
  std::vector<std::size_t> out;
  for (std::size_t w = 0; w < sampler_.workers(); ++w) out.push_back(sampler_.shard(w).size());
  return out;
}

shard_step shard_plan::plan(std::int64_t step) {
  go_to_pass(static_cast<std::uint64_t>(step / steps_per_pass_));
  const auto k = static_cast<std::size_t>(step % steps_per_pass_);
  const auto p = static_cast<std::size_t>(steps_per_pass_);
  shard_step out;
  for (std::size_t w = 0; w < sampler_.workers(); ++w) {
    const auto& order = sampler_.epoch_order(w);
    const std::size_t size = order.size();
    const std::size_t lo = k * size / p, hi = (k + 1) * size / p;
    out.indices.insert(out.indices.end(), order.begin() + static_cast<std::ptrdiff_t>(lo),
                       order.begin() + static_cast<std::ptrdiff_t>(hi));
    out.counts.push_back(static_cast<std::int64_t>(hi - lo));
  }
  return out;
}

}  // namespace troupe::actors
