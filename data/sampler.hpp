#pragma once
// The global epoch sampler: each epoch is a permutation of [0, n) drawn from (seed, epoch), read
// front to back by a cursor. A training step takes the next run of indices and the split plan
// cuts that run into consecutive worker slices, so every sample is used exactly once per epoch
// whatever the split and however often it changes.
//
// Epoch boundary: a step never straddles two epochs. If fewer than `count` indices are left in
// the epoch, the step is shortened to what is left (the caller re-splits the shorter batch) and
// the following step starts the next epoch at position 0.
//
// The cursor (epoch, position) is the whole state besides (n, seed): save it in a checkpoint and
// restore() it to resume the same sequence; peek(start, count) replays any step's indices
// without moving the cursor, e.g. to re-assign a failed worker's slice of that step.
// Not thread-safe (it caches the current epoch's permutation).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace troupe::data {

struct sampler_cursor {
  std::uint64_t epoch = 0;
  std::uint64_t position = 0;  // always < n once normalised
  bool operator==(const sampler_cursor& o) const {
    return epoch == o.epoch && position == o.position;
  }
  bool operator!=(const sampler_cursor& o) const { return !(*this == o); }
};

class epoch_sampler {
 public:
  // n must be positive (troupe::input_error otherwise).
  epoch_sampler(std::size_t n, std::uint64_t seed);

  std::size_t size() const { return n_; }
  std::uint64_t seed() const { return seed_; }

  // Where the next step starts.
  sampler_cursor cursor() const { return cursor_; }
  // Resumes from a saved cursor; position == n means the start of the next epoch.
  // troupe::input_error if position > n.
  void restore(sampler_cursor c);

  // The number of indices a step of `count` starting at `start` takes (shortened at epoch end).
  std::size_t step_size(sampler_cursor start, std::size_t count) const;
  // The step's indices; advances the cursor.
  std::vector<std::int64_t> next(std::size_t count);
  // The indices next(count) returned, or would return, from `start`; the cursor does not move.
  std::vector<std::int64_t> peek(sampler_cursor start, std::size_t count) const;
  // Where the cursor lands after a step of `count` from `start`.
  sampler_cursor after(sampler_cursor start, std::size_t count) const;

  // The full permutation of one epoch.
  std::vector<std::int64_t> permutation(std::uint64_t epoch) const;

 private:
  sampler_cursor normalise(sampler_cursor c) const;
  const std::vector<std::int64_t>& cached(std::uint64_t epoch) const;

  std::size_t n_;
  std::uint64_t seed_;
  sampler_cursor cursor_;
  mutable std::vector<std::int64_t> perm_;
  mutable std::uint64_t perm_epoch_ = 0;
  mutable bool perm_valid_ = false;
};

// Cuts a step's run of indices into consecutive slices of the given sizes (a split plan).
// troupe::input_error if the sizes are negative or do not sum to indices.size().
std::vector<std::vector<std::int64_t>> cut_slices(const std::vector<std::int64_t>& indices,
                                                  const std::vector<std::int64_t>& sizes);

}  // namespace troupe::data
