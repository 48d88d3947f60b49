#pragma once
// The sharded sampler: every worker owns a persistent shard of the dataset and walks it in a
// per-epoch shuffled order. Shards start as a seeded permutation of [0, n) cut by the workers'
// weights; between epochs, exchange(q, r) has each worker i hand a random fraction q of its shard
// to its ring neighbour (i + 1) mod W, so data drifts around the ring while every sample stays in
// exactly one shard.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/rng.hpp"

namespace troupe::data {

// Everything needed to resume: save it in a checkpoint, pass it back to the constructor.
struct sharded_state {
  std::uint64_t seed = 0;
  std::uint64_t epoch = 0;
  std::vector<std::vector<std::int64_t>> shards;  // each sorted ascending
  std::vector<std::size_t> positions;             // per worker, into this epoch's order
};

class sharded_sampler {
 public:
  // troupe::input_error on n == 0 or weights split_weighted rejects.
  sharded_sampler(std::size_t n, const std::vector<double>& weights, std::uint64_t seed);
  // troupe::input_error if the shards do not partition [0, n) or a position is out of range.
  explicit sharded_sampler(sharded_state s);

  std::size_t workers() const { return state_.shards.size(); }
  std::uint64_t epoch() const { return state_.epoch; }
  const std::vector<std::int64_t>& shard(std::size_t w) const { return state_.shards.at(w); }
  // Worker w's visiting order this epoch, a shuffle drawn from (seed, epoch, w).
  const std::vector<std::int64_t>& epoch_order(std::size_t w) const { return orders_.at(w); }

  // Worker w's next `count` indices this epoch: fewer at the end of its shard, none once done.
  std::vector<std::int64_t> next(std::size_t w, std::size_t count);
  std::size_t remaining(std::size_t w) const;

  // Ends the epoch without moving data: epoch + 1, every worker back to the start of its shard.
  void new_epoch();
  // Ends the epoch with a neighbour exchange: each worker i sends round(q |shard_i|) samples,
  // chosen uniformly with r from its shard as it was before any sending, to (i + 1) mod W; then
  // new_epoch(). Returns how many each worker sent. troupe::input_error unless 0 <= q <= 1.
  std::vector<std::size_t> exchange(double q, rng& r);

  const sharded_state& state() const { return state_; }

 private:
  void make_orders();

  sharded_state state_;
  std::vector<std::vector<std::int64_t>> orders_;
};

}  // namespace troupe::data
