#include "actors/job/shard_plan.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

using troupe::actors::shard_plan;

namespace {

// The samples rank w used in pass p: the union of its slices over the pass's steps.
std::vector<std::set<std::int64_t>> pass_slices(shard_plan& sp, std::int64_t pass) {
  std::vector<std::set<std::int64_t>> out(sp.ranks());
  for (std::int64_t k = 0; k < sp.steps_per_pass(); ++k) {
    const auto s = sp.plan(pass * sp.steps_per_pass() + k);
    std::size_t at = 0;
    for (std::size_t w = 0; w < s.counts.size(); ++w)
      for (std::int64_t i = 0; i < s.counts[w]; ++i) out[w].insert(s.indices[at++]);
    CHECK(at == s.indices.size());
  }
  return out;
}

}  // namespace

TEST_CASE("sharded plans use every sample once per pass, each rank from its own shard") {
  const std::size_t n = 1003;
  shard_plan sp(n, 64, {1.0, 2.0, 1.0}, 7, 0.25);
  REQUIRE(sp.steps_per_pass() == 16);  // ceil(1003 / 64)
  for (std::int64_t pass = 0; pass < 3; ++pass) {
    const auto sizes = sp.shard_sizes(pass * sp.steps_per_pass());
    const auto used = pass_slices(sp, pass);
    std::set<std::int64_t> all;
    std::size_t total = 0;
    for (std::size_t w = 0; w < used.size(); ++w) {
      CHECK(used[w].size() == sizes[w]);  // the whole shard, nothing else
      total += used[w].size();
      all.insert(used[w].begin(), used[w].end());
    }
    CHECK(total == n);
    CHECK(all.size() == n);
    CHECK(*all.begin() == 0);
    CHECK(*all.rbegin() == static_cast<std::int64_t>(n) - 1);
  }
  // The first cut follows the weights 1:2:1.
  const auto s0 = sp.shard_sizes(0);
  CHECK(s0[1] == doctest::Approx(2.0 * static_cast<double>(s0[0])).epsilon(0.01));
  // No step is larger than the batch, and each rank's count follows its shard.
  for (std::int64_t step = 0; step < sp.steps_per_pass(); ++step) {
    const auto s = sp.plan(step);
    std::int64_t sum = 0;
    for (auto c : s.counts) sum += c;
    CHECK(sum <= 64);
    CHECK(s.counts[1] >= s.counts[0]);
  }
}

TEST_CASE("between passes each shard hands round(q |S|) samples to its ring neighbour") {
  shard_plan sp(900, 50, {1.0, 1.0, 1.0}, 11, 0.2);
  const auto before = pass_slices(sp, 0);
  const auto after = pass_slices(sp, 1);
  for (std::size_t w = 0; w < 3; ++w) {
    const auto& from = before[(w + 2) % 3];  // the neighbour below sends to w
    std::size_t moved = 0;
    for (auto i : after[w]) moved += from.count(i);
    CHECK(moved == static_cast<std::size_t>(std::llround(0.2 * static_cast<double>(from.size()))));
  }
}

TEST_CASE("a sharded step is the same however it is reached (re-planning, resuming)") {
  shard_plan forward(500, 40, {3.0, 1.0}, 5, 0.3), jumper(500, 40, {3.0, 1.0}, 5, 0.3);
  std::vector<std::vector<std::int64_t>> seen;
  for (std::int64_t step = 0; step < 3 * forward.steps_per_pass(); ++step)
    seen.push_back(forward.plan(step).indices);
  // Jump to pass 2, back to pass 0, then into pass 1: each plan as the forward walk had it.
  for (std::int64_t step : {30, 2, 17, 38, 0}) CHECK(jumper.plan(step).indices == seen[step]);
}

TEST_CASE("q outside [0, 1) is refused") {
  CHECK_THROWS(shard_plan(10, 4, {1.0}, 1, 1.0));
  CHECK_THROWS(shard_plan(10, 4, {1.0}, 1, -0.1));
}
