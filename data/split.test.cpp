#include "data/split.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "core/rng.hpp"

using namespace troupe::data;

namespace {
std::int64_t sum(const std::vector<std::int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), std::int64_t{0});
}
}  // namespace

TEST_CASE("split_even") {
  CHECK(split_even(10, 3) == std::vector<std::int64_t>{4, 3, 3});
  CHECK(split_even(2, 4) == std::vector<std::int64_t>{1, 1, 0, 0});
  CHECK(split_even(0, 2) == std::vector<std::int64_t>{0, 0});
  CHECK_THROWS_AS(split_even(-1, 2), troupe::input_error);
  CHECK_THROWS_AS(split_even(5, 0), troupe::input_error);
}

TEST_CASE("split_weighted examples and tie-break") {
  CHECK(split_weighted(10, {1, 1, 1}) == std::vector<std::int64_t>{4, 3, 3});
  CHECK(split_weighted(100, {3, 1}) == std::vector<std::int64_t>{75, 25});
  CHECK(split_weighted(7, {0, 2, 5}) == std::vector<std::int64_t>{0, 2, 5});
  CHECK(split_weighted(3, {1, 0, 1, 1, 0}) == std::vector<std::int64_t>{1, 0, 1, 1, 0});
  // Quotas 0.2 and 3.8: without min_one the small worker gets nothing.
  CHECK(split_weighted(4, {1, 19}) == std::vector<std::int64_t>{0, 4});
  CHECK(split_weighted(4, {1, 19}, true) == std::vector<std::int64_t>{1, 3});
  // min_one cannot apply when there are fewer samples than positive workers.
  CHECK(split_weighted(1, {1, 1, 1}, true) == std::vector<std::int64_t>{1, 0, 0});
}

TEST_CASE("split_weighted rejects bad input") {
  CHECK_THROWS_AS(split_weighted(-1, {1}), troupe::input_error);
  CHECK_THROWS_AS(split_weighted(5, {}), troupe::input_error);
  CHECK_THROWS_AS(split_weighted(5, {1, -0.5}), troupe::input_error);
  CHECK_THROWS_AS(split_weighted(5, {0, 0}), troupe::input_error);
  CHECK_THROWS_AS(split_weighted(5, {1, std::nan("")}), troupe::input_error);
}

TEST_CASE("split_weighted properties over random weights and batches") {
  troupe::rng r{2024};
  for (int trial = 0; trial < 5000; ++trial) {
    const std::size_t w = 1 + r.below(12);
    std::vector<double> weights(w);
    for (auto& x : weights) {
      // Mix zeros, tiny and huge weights so rounding paths get exercised.
      const auto kind = r.below(4);
      x = kind == 0 ? 0.0 : kind == 1 ? r.uniform() * 1e-6 : r.uniform() * std::pow(10, r.below(6));
    }
    if (std::accumulate(weights.begin(), weights.end(), 0.0) == 0) weights[r.below(w)] = 1;
    const std::int64_t batch = static_cast<std::int64_t>(r.below(r.below(2) ? 10 : 100000));
    const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
    std::size_t positive = 0;
    for (double x : weights) positive += x > 0;
    const auto plain = split_weighted(batch, weights);
    REQUIRE(plain.size() == w);
    REQUIRE(sum(plain) == batch);
    for (std::size_t i = 0; i < w; ++i) {
      REQUIRE(plain[i] >= 0);
      if (weights[i] == 0) REQUIRE(plain[i] == 0);
      const double quota = static_cast<double>(batch) * weights[i] / total;
      REQUIRE(std::abs(static_cast<double>(plain[i]) - quota) < 1.0 + 1e-9);
    }
    REQUIRE(split_weighted(batch, weights) == plain);  // deterministic

    // min_one only moves single samples from larger slices to empty positive-weight ones.
    const auto s = split_weighted(batch, weights, true);
    REQUIRE(sum(s) == batch);
    const bool floor_one = static_cast<std::size_t>(batch) >= positive;
    for (std::size_t i = 0; i < w; ++i) {
      if (!floor_one || weights[i] == 0) {
        REQUIRE(s[i] == plain[i]);
      } else if (plain[i] == 0) {
        REQUIRE(s[i] == 1);
      } else {
        REQUIRE(s[i] >= 1);
        REQUIRE(s[i] <= plain[i]);
      }
    }
  }
}

TEST_CASE("split_blocks cuts at block boundaries, the last block short") {
  // 256 samples in blocks of 16 (16 blocks), weights 3:3:1: 7, 7 and 2 blocks.
  CHECK(split_blocks(256, 16, {3, 3, 1}) == std::vector<std::int64_t>{112, 112, 32});
  // 250 = 15 blocks of 16 and one of 10: the slice holding the last block is 6 short.
  CHECK(split_blocks(250, 16, {3, 3, 1}) == std::vector<std::int64_t>{112, 112, 26});
  // The last slice empty: the one before it holds the short block.
  CHECK(split_blocks(20, 16, {1, 1, 0}) == std::vector<std::int64_t>{16, 4, 0});
  CHECK(split_blocks(0, 16, {1, 1}) == std::vector<std::int64_t>{0, 0});
  CHECK(split_blocks(10, 0, {1, 1}) == split_weighted(10, {1, 1}));
  troupe::rng r{7};
  for (int trial = 0; trial < 2000; ++trial) {
    const std::size_t w = 1 + r.below(6);
    std::vector<double> weights(w);
    for (auto& x : weights) x = r.below(3) == 0 ? 0.0 : r.uniform() * 10;
    if (std::accumulate(weights.begin(), weights.end(), 0.0) == 0) weights[0] = 1;
    const std::int64_t block = 1 + static_cast<std::int64_t>(r.below(40));
    const std::int64_t batch = static_cast<std::int64_t>(r.below(1000));
    const auto s = split_blocks(batch, block, weights, r.below(2) == 1);
    REQUIRE(sum(s) == batch);
    // Every slice starts at a block boundary.
    std::int64_t offset = 0;
    for (std::size_t i = 0; i < w; ++i) {
      REQUIRE(s[i] >= 0);
      if (weights[i] == 0) REQUIRE(s[i] == 0);
      if (s[i] > 0) REQUIRE(offset % block == 0);
      offset += s[i];
    }
  }
}
