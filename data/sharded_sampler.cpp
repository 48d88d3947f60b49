#include "data/sharded_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "core/error.hpp"
#include "data/split.hpp"

namespace troupe::data {

sharded_sampler::sharded_sampler(std::size_t n, const std::vector<double>& weights,
                                 std::uint64_t seed) {
  if (n == 0) throw input_error("sharded_sampler: the dataset is empty");
  const auto sizes = split_weighted(static_cast<std::int64_t>(n), weights);
  std::vector<std::int64_t> perm(n);
  std::iota(perm.begin(), perm.end(), std::int64_t{0});
  // A stream of its own, so the assignment is independent of every epoch's visiting order.
  rng r = rng{seed}.fork(~std::uint64_t{0});
  r.shuffle(perm);
  state_.seed = seed;
  auto at = perm.begin();
  for (const auto s : sizes) {
    state_.shards.emplace_back(at, at + s);
    std::sort(state_.shards.back().begin(), state_.shards.back().end());
    at += s;
  }
  state_.positions.assign(sizes.size(), 0);
  make_orders();
}

sharded_sampler::sharded_sampler(sharded_state s) : state_(std::move(s)) {
  if (state_.shards.empty()) throw input_error("sharded_sampler: state has no shards");
  if (state_.positions.size() != state_.shards.size()) {
    throw input_error("sharded_sampler: state has " + std::to_string(state_.shards.size()) +
                      " shards but " + std::to_string(state_.positions.size()) + " positions");
  }
  std::size_t n = 0;
  for (const auto& sh : state_.shards) n += sh.size();
  std::vector<bool> seen(n, false);
  for (std::size_t w = 0; w < state_.shards.size(); ++w) {
    auto& sh = state_.shards[w];
    std::sort(sh.begin(), sh.end());
    for (const auto i : sh) {
      if (i < 0 || static_cast<std::size_t>(i) >= n || seen[static_cast<std::size_t>(i)]) {
        throw input_error("sharded_sampler: state shards do not partition [0, " +
                          std::to_string(n) + "): index " + std::to_string(i) + " in shard " +
                          std::to_string(w));
      }
      seen[static_cast<std::size_t>(i)] = true;
    }
    if (state_.positions[w] > sh.size()) {
      throw input_error("sharded_sampler: state position of worker " + std::to_string(w) +
                        " is beyond its shard");
    }
  }
  make_orders();
}

void sharded_sampler::make_orders() {
  orders_ = state_.shards;
  const rng per_epoch = rng{state_.seed}.fork(state_.epoch);
  for (std::size_t w = 0; w < orders_.size(); ++w) {
    rng r = per_epoch.fork(w);
    r.shuffle(orders_[w]);
  }
}

std::vector<std::int64_t> sharded_sampler::next(std::size_t w, std::size_t count) {
  const auto& order = orders_.at(w);
  auto& pos = state_.positions[w];
  const std::size_t take = std::min(count, order.size() - pos);
  const auto from = order.begin() + static_cast<std::ptrdiff_t>(pos);
  pos += take;
  return {from, from + static_cast<std::ptrdiff_t>(take)};
}

std::size_t sharded_sampler::remaining(std::size_t w) const {
  return orders_.at(w).size() - state_.positions.at(w);
}

void sharded_sampler::new_epoch() {
  ++state_.epoch;
  std::fill(state_.positions.begin(), state_.positions.end(), 0);
  make_orders();
}

std::vector<std::size_t> sharded_sampler::exchange(double q, rng& r) {
  if (!(q >= 0 && q <= 1)) {
    throw input_error("sharded_sampler: exchange fraction " + std::to_string(q) +
                      " is outside [0, 1]");
  }
  const std::size_t w = workers();
  std::vector<std::vector<std::int64_t>> keep(w), sent(w);
  std::vector<std::size_t> counts(w);
  for (std::size_t i = 0; i < w; ++i) {
    auto shard = state_.shards[i];
    counts[i] = static_cast<std::size_t>(std::llround(q * static_cast<double>(shard.size())));
    // A partial Fisher-Yates: the first counts[i] slots end up a uniform random subset.
    for (std::size_t k = 0; k < counts[i]; ++k) {
      std::swap(shard[k], shard[k + r.below(shard.size() - k)]);
    }
    sent[i].assign(shard.begin(), shard.begin() + static_cast<std::ptrdiff_t>(counts[i]));
    keep[i].assign(shard.begin() + static_cast<std::ptrdiff_t>(counts[i]), shard.end());
  }
  for (std::size_t i = 0; i < w; ++i) {
    auto& dst = keep[(i + 1) % w];
    dst.insert(dst.end(), sent[i].begin(), sent[i].end());
  }
  for (std::size_t i = 0; i < w; ++i) {
    std::sort(keep[i].begin(), keep[i].end());
    state_.shards[i] = std::move(keep[i]);
  }
  new_epoch();
  return counts;
}

}  // namespace troupe::data
