#include "data/sampler.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "data/split.hpp"

using namespace troupe::data;

TEST_CASE("each epoch is a permutation, seeded and different per epoch") {
  epoch_sampler s{100, 7};
  const auto p0 = s.permutation(0), p1 = s.permutation(1);
  auto sorted = p0;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::int64_t> iota(100);
  std::iota(iota.begin(), iota.end(), 0);
  CHECK(sorted == iota);
  CHECK(p0 != p1);
  CHECK(p0 != iota);
  CHECK(epoch_sampler(100, 7).permutation(1) == p1);
  CHECK(epoch_sampler(100, 8).permutation(0) != p0);
  CHECK_THROWS_AS(epoch_sampler(0, 1), troupe::input_error);
}

TEST_CASE("every sample exactly once per epoch across random batch and split changes") {
  troupe::rng r{31};
  const std::size_t n = 997;  // prime, so batches rarely divide it
  epoch_sampler s{n, 3};
  std::vector<int> used(n, 0);
  std::uint64_t epoch = 0;
  std::size_t steps = 0, short_steps = 0;
  while (epoch < 6) {
    const auto start = s.cursor();
    REQUIRE(start.position < n);
    if (start.epoch != epoch) {
      // The previous epoch closed exactly: each sample used once, none skipped.
      for (auto u : used) REQUIRE(u == 1);
      std::fill(used.begin(), used.end(), 0);
      epoch = start.epoch;
    }
    const std::size_t batch = 1 + r.below(r.below(4) == 0 ? 300 : 64);
    const auto idx = s.next(batch);
    REQUIRE(idx.size() == std::min<std::size_t>(batch, n - start.position));
    short_steps += idx.size() < batch;
    // A fresh random split every step; the slices together are exactly the step's run.
    std::vector<double> weights(1 + r.below(6));
    for (auto& w : weights) w = r.below(3) == 0 ? 0.0 : r.uniform();
    weights[0] += 0.1;
    const auto slices =
        cut_slices(idx, split_weighted(static_cast<std::int64_t>(idx.size()), weights));
    for (const auto& sl : slices)
      for (auto i : sl) ++used[static_cast<std::size_t>(i)];
    ++steps;
  }
  CHECK(short_steps >= 1);
  CHECK(steps > 6 * n / 64);
}

TEST_CASE("epoch boundary: the last step is shortened and the next starts a new epoch") {
  epoch_sampler s{10, 1};
  CHECK(s.next(4).size() == 4);
  CHECK(s.next(4).size() == 4);
  CHECK(s.step_size(s.cursor(), 4) == 2);
  const auto tail = s.next(4);
  CHECK(tail.size() == 2);
  CHECK(s.cursor() == sampler_cursor{1, 0});
  const auto p1 = s.permutation(1);
  CHECK(s.next(3) == std::vector<std::int64_t>(p1.begin(), p1.begin() + 3));
  // A step exactly reaching the end also rolls over.
  epoch_sampler e{6, 1};
  e.next(6);
  CHECK(e.cursor() == sampler_cursor{1, 0});
}

TEST_CASE("restore from a saved cursor reproduces the sequence; peek replays any step") {
  troupe::rng r{5};
  epoch_sampler a{123, 99};
  for (int i = 0; i < 17; ++i) a.next(1 + r.below(40));
  const sampler_cursor saved = a.cursor();
  std::vector<std::size_t> batches;
  std::vector<sampler_cursor> starts;
  std::vector<std::vector<std::int64_t>> expect;
  for (int i = 0; i < 30; ++i) {
    batches.push_back(1 + r.below(40));
    starts.push_back(a.cursor());
    expect.push_back(a.next(batches.back()));
  }
  epoch_sampler b{123, 99};
  b.restore(saved);
  CHECK(b.cursor() == saved);
  for (std::size_t i = 0; i < batches.size(); ++i) {
    CHECK(b.next(batches[i]) == expect[i]);
    // Replay out of order, the way a job re-plans a failed worker's slice.
    const std::size_t j = r.below(i + 1);
    CHECK(b.peek(starts[j], batches[j]) == expect[j]);
    CHECK(b.after(starts[j], batches[j]) == (j + 1 < starts.size() ? starts[j + 1] : a.cursor()));
  }
  CHECK(b.cursor() == a.cursor());
  // position == n is accepted as the start of the next epoch; beyond it is an error.
  b.restore({4, 123});
  CHECK(b.cursor() == sampler_cursor{5, 0});
  CHECK_THROWS_AS(b.restore({4, 124}), troupe::input_error);
}

TEST_CASE("cut_slices") {
  const std::vector<std::int64_t> idx = {5, 3, 9, 1};
  const auto s = cut_slices(idx, {1, 0, 3});
  CHECK(s == std::vector<std::vector<std::int64_t>>{{5}, {}, {3, 9, 1}});
  CHECK_THROWS_AS(cut_slices(idx, {1, 2}), troupe::input_error);
  CHECK_THROWS_AS(cut_slices(idx, {5, -1}), troupe::input_error);
}
