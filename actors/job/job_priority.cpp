#include "actors/job/job_priority.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/rng.hpp"

namespace troupe::actors {

priority_plan::priority_plan(std::size_t n, std::int64_t batch, const config::priority_config& cfg,
                             std::uint64_t seed)
    : batch_(batch),
      seed_(seed),
      loss_(n, std::numeric_limits<double>::quiet_NaN()),
      last_seen_(n, -1.0) {
  options_.alpha = cfg.alpha;
  options_.beta = cfg.beta;
  // A sample unseen for about a pass is worth a second look (at most twice its loss score).
  options_.staleness_horizon =
      std::max(1.0, static_cast<double>(n) / static_cast<double>(std::max<std::int64_t>(1, batch)));
}

msg::index_list priority_plan::draw(std::int64_t step) const {
  std::vector<double> staleness(loss_.size());
  for (std::size_t i = 0; i < loss_.size(); ++i)
    staleness[i] =
        last_seen_[i] < 0 ? 0.0 : std::max(0.0, static_cast<double>(step) - last_seen_[i]);
  const policies::priority_sampler sampler(loss_, staleness, options_);
  rng r = rng(seed_).fork(0x9e3779b97f4a7c15ULL ^ static_cast<std::uint64_t>(step));
  const auto b = sampler.draw(static_cast<std::size_t>(batch_), r);
  // The sampler's weights are divided by their maximum (PER). With a uniform floor the rarest
  // sample's weight is ~1/u times the typical one, so that would shrink every step ~100x. Scale
  // instead so that the weights' expectation under P is 1: for beta = 1 these are exactly the
  // unbiased (N P)^-1, and the learning rate keeps its meaning for every beta.
  // The sampler's weights w are raw / max, so sum_i P_i raw_i / max = sum_i P_i w_i.
  const auto& prob = sampler.probabilities();
  const auto& w = sampler.weights();
  double mean = 0.0;
  for (std::size_t i = 0; i < w.size(); ++i) mean += prob[i] * w[i];
  const double scale = mean > 0 ? 1.0 / mean : 1.0;
  msg::index_list out;
  out.reserve(b.indices.size());
  out.weights.reserve(b.weights.size());
  for (std::size_t k = 0; k < b.indices.size(); ++k) {
    out.push_back(static_cast<std::int64_t>(b.indices[k]));
    out.weights.push_back(static_cast<float>(b.weights[k] * scale));
  }
  return out;
}

void priority_plan::observe(std::int64_t step, const std::vector<std::int64_t>& indices,
                            const std::vector<float>& losses) {
  for (std::size_t k = 0; k < indices.size() && k < losses.size(); ++k) {
    const auto i = static_cast<std::size_t>(indices[k]);
    if (i >= loss_.size() || !std::isfinite(losses[k])) continue;
    loss_[i] = losses[k];
    last_seen_[i] = std::max(last_seen_[i], static_cast<double>(step));
  }
}

}  // namespace troupe::actors
