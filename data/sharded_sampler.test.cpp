#include "data/sharded_sampler.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.hpp"
#include "data/split.hpp"

using namespace troupe::data;

namespace {

// Every index of [0, n) in exactly one shard.
bool partitions(const sharded_sampler& s, std::size_t n) {
  std::vector<int> seen(n, 0);
  for (std::size_t w = 0; w < s.workers(); ++w)
    for (auto i : s.shard(w)) {
      if (i < 0 || static_cast<std::size_t>(i) >= n) return false;
      ++seen[static_cast<std::size_t>(i)];
    }
  return std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; });
}

}  // namespace

TEST_CASE("initial shards follow the weights and partition the dataset") {
  const std::vector<double> weights = {1, 3, 0, 2};
  sharded_sampler s{1000, weights, 4};
  CHECK(s.workers() == 4);
  CHECK(partitions(s, 1000));
  const auto sizes = split_weighted(1000, weights);
  for (std::size_t w = 0; w < 4; ++w)
    CHECK(static_cast<std::int64_t>(s.shard(w).size()) == sizes[w]);
  // Shards are a random assignment, not contiguous ranges.
  CHECK(s.shard(0).back() - s.shard(0).front() > 500);
  CHECK_THROWS_AS(sharded_sampler(0, weights, 1), troupe::input_error);
  CHECK_THROWS_AS(sharded_sampler(10, {0, 0}, 1), troupe::input_error);
}

TEST_CASE("each worker visits its shard once per epoch, in a new order each epoch") {
  sharded_sampler s{500, {1, 1, 2}, 9};
  std::vector<std::int64_t> prev_order;
  for (int epoch = 0; epoch < 3; ++epoch) {
    for (std::size_t w = 0; w < 3; ++w) {
      std::vector<std::int64_t> got;
      while (s.remaining(w) > 0) {
        const auto part = s.next(w, 7);
        REQUIRE(!part.empty());
        got.insert(got.end(), part.begin(), part.end());
      }
      CHECK(s.next(w, 7).empty());
      CHECK(got == s.epoch_order(w));
      std::sort(got.begin(), got.end());
      CHECK(got == s.shard(w));
    }
    if (!prev_order.empty()) CHECK(prev_order != s.epoch_order(0));
    prev_order = s.epoch_order(0);
    s.new_epoch();
  }
  CHECK(s.epoch() == 3);
}

TEST_CASE("neighbour exchange keeps every sample exactly once and moves about q of each shard") {
  troupe::rng r{77};
  const std::size_t n = 3000;
  sharded_sampler s{n, {1, 2, 3, 0.5, 1}, 12};
  for (int round = 0; round < 20; ++round) {
    const double q = round % 4 == 0 ? 0.0 : r.uniform() * 0.5;
    const auto before = s.state().shards;
    const auto sent = s.exchange(q, r);
    REQUIRE(partitions(s, n));
    const std::size_t w = s.workers();
    for (std::size_t i = 0; i < w; ++i) {
      CHECK(sent[i] == static_cast<std::size_t>(std::llround(q * before[i].size())));
      // Whatever worker j = i+1 gained came from worker i, and exactly sent[i] of it.
      const std::size_t j = (i + 1) % w;
      const std::set<std::int64_t> old_i(before[i].begin(), before[i].end());
      const std::set<std::int64_t> old_j(before[j].begin(), before[j].end());
      std::size_t gained = 0;
      for (auto x : s.shard(j)) {
        if (old_j.count(x)) continue;
        ++gained;
        CHECK(old_i.count(x) == 1);
      }
      CHECK(gained == sent[i]);
      CHECK(s.shard(j).size() == before[j].size() - sent[j] + sent[i]);
    }
  }
  CHECK(s.epoch() == 20);
  CHECK_THROWS_AS(s.exchange(1.5, r), troupe::input_error);
}

TEST_CASE("state round trip resumes mid-epoch; corrupt state is rejected") {
  troupe::rng r{1};
  sharded_sampler a{200, {1, 1}, 5};
  a.exchange(0.3, r);
  a.next(0, 11);
  a.next(1, 4);
  sharded_sampler b{a.state()};
  for (std::size_t w = 0; w < 2; ++w) {
    CHECK(b.epoch_order(w) == a.epoch_order(w));
    CHECK(b.next(w, 9) == a.next(w, 9));
  }
  auto bad = a.state();
  bad.shards[1].push_back(bad.shards[0].front());
  CHECK_THROWS_AS(sharded_sampler{bad}, troupe::input_error);
}
