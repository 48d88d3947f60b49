#include "data/sampler.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace troupe::data {

epoch_sampler::epoch_sampler(std::size_t n, std::uint64_t seed) : n_(n), seed_(seed) {
  if (n == 0) throw input_error("epoch_sampler: the dataset is empty");
}

sampler_cursor epoch_sampler::normalise(sampler_cursor c) const {
  if (c.position > n_) {
    throw input_error("epoch_sampler: cursor position " + std::to_string(c.position) +
                      " is beyond the dataset size " + std::to_string(n_));
  }
  if (c.position == n_) return {c.epoch + 1, 0};
  return c;
}

void epoch_sampler::restore(sampler_cursor c) {
  cursor_ = normalise(c);
}

std::size_t epoch_sampler::step_size(sampler_cursor start, std::size_t count) const {
  const auto c = normalise(start);
  return static_cast<std::size_t>(std::min<std::uint64_t>(count, n_ - c.position));
}

sampler_cursor epoch_sampler::after(sampler_cursor start, std::size_t count) const {
  auto c = normalise(start);
  c.position += step_size(c, count);
  return normalise(c);
}

std::vector<std::int64_t> epoch_sampler::permutation(std::uint64_t epoch) const {
  std::vector<std::int64_t> p(n_);
  std::iota(p.begin(), p.end(), std::int64_t{0});
  // One independent stream per epoch: any epoch can be regenerated without replaying the others.
  rng r = rng{seed_}.fork(epoch);
  r.shuffle(p);
  return p;
}

const std::vector<std::int64_t>& epoch_sampler::cached(std::uint64_t epoch) const {
  if (!perm_valid_ || perm_epoch_ != epoch) {
    perm_ = permutation(epoch);
    perm_epoch_ = epoch;
    perm_valid_ = true;
  }
  return perm_;
}

std::vector<std::int64_t> epoch_sampler::peek(sampler_cursor start, std::size_t count) const {
  const auto c = normalise(start);
  const auto& p = cached(c.epoch);
  const auto from = p.begin() + static_cast<std::ptrdiff_t>(c.position);
  return {from, from + static_cast<std::ptrdiff_t>(step_size(c, count))};
}

std::vector<std::int64_t> epoch_sampler::next(std::size_t count) {
  auto out = peek(cursor_, count);
  cursor_ = after(cursor_, count);
  return out;
}

std::vector<std::vector<std::int64_t>> cut_slices(const std::vector<std::int64_t>& indices,
                                                  const std::vector<std::int64_t>& sizes) {
  std::int64_t total = 0;
  for (const auto s : sizes) {
    if (s < 0) throw input_error("cut_slices: negative slice size " + std::to_string(s));
    total += s;
  }
  if (total != static_cast<std::int64_t>(indices.size())) {
    throw input_error("cut_slices: slice sizes sum to " + std::to_string(total) +
                      " but the step has " + std::to_string(indices.size()) + " indices");
  }
  std::vector<std::vector<std::int64_t>> out;
  auto at = indices.begin();
  for (const auto s : sizes) {
    out.emplace_back(at, at + s);
    at += s;
  }
  return out;
}

}  // namespace troupe::data
