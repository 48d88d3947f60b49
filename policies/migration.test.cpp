#include "policies/migration.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"

using namespace troupe::policies;
using counts = std::vector<std::int64_t>;
using ranges = std::vector<index_range>;

namespace {

const member_work* find(const step_work& w, std::int32_t m) {
  for (const auto& x : w)
    if (x.member == m) return &x;
  return nullptr;
}

// Position -> member (-1: nobody), over [0, batch).
std::vector<std::int32_t> owners(const step_work& w, std::int64_t batch) {
  std::vector<std::int32_t> out(static_cast<std::size_t>(batch), -1);
  for (const auto& m : w)
    for (const auto& r : m.ranges)
      for (auto p = r.begin; p < r.end; ++p) out[static_cast<std::size_t>(p)] = m.member;
  return out;
}

}  // namespace

TEST_CASE("split_by_weight: the data::split_weighted rule, and all-zero is even") {
  // The same examples as data/split.test.cpp, so the two stay one rule.
  CHECK(split_by_weight(10, {1, 1, 1}) == counts{4, 3, 3});
  CHECK(split_by_weight(100, {3, 1}) == counts{75, 25});
  CHECK(split_by_weight(7, {0, 2, 5}) == counts{0, 2, 5});
  CHECK(split_by_weight(3, {1, 0, 1, 1, 0}) == counts{1, 0, 1, 1, 0});
  CHECK(split_by_weight(4, {1, 19}) == counts{0, 4});
  CHECK(split_by_weight(4, {1, 19}, true) == counts{1, 3});
  CHECK(split_by_weight(1, {1, 1, 1}, true) == counts{1, 0, 0});
  // Differs on purpose: all-zero weights split evenly instead of failing.
  CHECK(split_by_weight(5, {0, 0}) == counts{3, 2});
  CHECK(split_by_weight(0, {1, 2}) == counts{0, 0});
  CHECK_THROWS_AS(split_by_weight(-1, {1}), troupe::input_error);
  CHECK_THROWS_AS(split_by_weight(5, {}), troupe::input_error);
  CHECK_THROWS_AS(split_by_weight(5, {1, -0.5}), troupe::input_error);
  CHECK_THROWS_AS(split_by_weight(5, {1, std::nan("")}), troupe::input_error);
}

TEST_CASE("assign_contiguous: data::cut_slices' order") {
  const auto w = assign_contiguous({7, 3, 9}, {4, 0, 6});
  REQUIRE(w.size() == 3);
  CHECK(w[0].member == 7);
  CHECK(w[0].ranges == ranges{{0, 4}});
  CHECK(w[1].ranges.empty());  // listed, with nothing to do
  CHECK(w[2].ranges == ranges{{4, 10}});
  CHECK(check_exactly_once(w, 10) == "");
  CHECK_THROWS_AS(assign_contiguous({1, 2}, {3}), troupe::input_error);
  CHECK_THROWS_AS(assign_contiguous({1, 1}, {3, 3}), troupe::input_error);
  CHECK_THROWS_AS(assign_contiguous({1}, {-3}), troupe::input_error);
}

TEST_CASE("migrate: a worked example") {
  // Ranks 0, 1, 2 hold [0,40) [40,60) [60,100); rank 1 dies. Survivors weigh 2:1, so its 20
  // positions split 13:7 (quotas 13.33 and 6.67, the leftover unit to the larger fraction).
  const auto cur = assign_contiguous({0, 1, 2}, {40, 20, 40});
  const auto p = migrate(cur, {1}, {{0, 2.0}, {2, 1.0}}, 100);
  REQUIRE(p.moved.size() == 2);
  CHECK(p.moved[0].member == 0);
  CHECK(p.moved[0].ranges == ranges{{40, 53}});
  CHECK(p.moved[1].member == 2);
  CHECK(p.moved[1].ranges == ranges{{53, 60}});
  CHECK(p.moved_samples == 20);
  REQUIRE(p.work.size() == 2);
  CHECK(p.work[0].ranges == ranges{{0, 53}});  // merged with its own slice
  CHECK(p.work[1].ranges == ranges{{53, 100}});
  CHECK(check_exactly_once(p.work, 100) == "");
  CHECK(p.next_members == std::vector<std::int32_t>{0, 2});
  CHECK(p.next_split == counts{67, 33});
}

TEST_CASE("migrate: nothing to move, new members, a second failure during recovery") {
  const auto cur = assign_contiguous({0, 1, 2}, {5, 0, 5});
  // Rank 1 had no work; a restarted rank 3 joins with none.
  auto p = migrate(cur, {1}, {{0, 1}, {2, 1}, {3, 1}}, 12);
  CHECK(p.moved.empty());
  CHECK(p.moved_samples == 0);
  CHECK(find(p.work, 3)->ranges.empty());
  CHECK(p.next_split == counts{4, 4, 4});
  CHECK(check_exactly_once(p.work, 10) == "");

  // Rank 2 dies; then rank 3, which took part of rank 2's work, dies too.
  p = migrate(p.work, {2}, {{0, 1}, {3, 1}}, 12);
  // Its 5 positions split 3:2 between equal weights (the tie's unit to the first survivor).
  CHECK(find(p.work, 0)->ranges == ranges{{0, 8}});
  CHECK(find(p.work, 3)->ranges == ranges{{8, 10}});
  CHECK(check_exactly_once(p.work, 10) == "");
  p = migrate(p.work, {3}, {{0, 1}}, 12);
  CHECK(p.work.size() == 1);
  CHECK(p.work[0].ranges == ranges{{0, 10}});
  CHECK(p.moved[0].ranges == ranges{{8, 10}});
}

TEST_CASE("migrate: zero-weight survivors take nothing unless all are zero") {
  const auto cur = assign_contiguous({0, 1, 2}, {4, 4, 4});
  auto p = migrate(cur, {0}, {{1, 0.0}, {2, 1.0}}, 12);
  CHECK(find(p.work, 1)->ranges == ranges{{4, 8}});
  CHECK(find(p.work, 2)->ranges == ranges{{0, 4}, {8, 12}});
  CHECK(p.next_split == counts{0, 12});
  p = migrate(cur, {0}, {{1, 0.0}, {2, 0.0}}, 12);
  CHECK(find(p.work, 1)->samples() == 6);
  CHECK(find(p.work, 2)->samples() == 6);
  CHECK(check_exactly_once(p.work, 12) == "");
}

TEST_CASE("migrate: bad plans and member lists are refused") {
  const auto cur = assign_contiguous({0, 1, 2}, {4, 4, 4});
  CHECK_THROWS_WITH_AS(migrate(cur, {0, 1, 2}, {}, 12), doctest::Contains("no surviving members"),
                       troupe::input_error);
  CHECK_THROWS_WITH_AS(migrate(cur, {0}, {{1, 1}}, 12),
                       doctest::Contains("member 2 is neither failed nor a survivor"),
                       troupe::input_error);
  CHECK_THROWS_WITH_AS(migrate(cur, {0}, {{0, 1}, {1, 1}, {2, 1}}, 12),
                       doctest::Contains("member 0 both failed and survives"), troupe::input_error);
  CHECK_THROWS_AS(migrate(cur, {0}, {{1, 1}, {1, 1}, {2, 1}}, 12), troupe::input_error);
  CHECK_THROWS_AS(migrate(cur, {0}, {{1, -1}, {2, 1}}, 12), troupe::input_error);
  step_work overlap = cur;
  overlap[1].ranges[0].begin = 3;
  CHECK_THROWS_WITH_AS(migrate(overlap, {0}, {{1, 1}, {2, 1}}, 12),
                       doctest::Contains("position 3 is planned for members 0 and 1"),
                       troupe::input_error);
}

TEST_CASE("check_exactly_once: finds gaps, overlaps, overruns and malformed ranges") {
  CHECK(check_exactly_once({{0, {{0, 5}}}, {1, {{5, 10}}}}, 10) == "");
  CHECK(check_exactly_once({{0, {{0, 5}}}, {1, {{6, 10}}}}, 10) ==
        "positions [5, 6) are computed by no member");
  CHECK(check_exactly_once({{0, {{0, 5}}}, {1, {{4, 10}}}}, 10) ==
        "position 4 is computed by members 0 and 1");
  CHECK(check_exactly_once({{0, {{0, 5}}}}, 10) == "positions [5, 10) are computed by no member");
  CHECK(check_exactly_once({{0, {{0, 12}}}}, 10) == "positions reach 12, past the batch 10");
  CHECK(check_exactly_once({{0, {{0, 0}}}}, 0) == "member 0 has an empty or reversed range [0, 0)");
  CHECK(check_exactly_once({{0, {{5, 10}, {0, 5}}}}, 10) ==
        "member 0's ranges are not sorted, disjoint and merged");
  CHECK(check_exactly_once({{0, {{-1, 5}}}}, 5) == "member 0 has a negative position -1");
}

TEST_CASE("migrate: exactly once over random plans and failure sequences") {
  troupe::rng r(2024);
  int cases = 0, moved_total = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const auto n = static_cast<std::int32_t>(1 + r.below(9));
    const std::int64_t batch = static_cast<std::int64_t>(r.below(600));
    std::vector<std::int32_t> members(static_cast<std::size_t>(n));
    std::iota(members.begin(), members.end(), 0);
    r.shuffle(members);  // member ids are not positions
    std::vector<double> w0;
    for (int i = 0; i < n; ++i) w0.push_back(r.below(4) == 0 ? 0.0 : r.uniform() * 10);
    step_work work = assign_contiguous(members, split_by_weight(batch, w0, true));
    REQUIRE(check_exactly_once(work, batch) == "");
    std::map<std::int32_t, double> weight;
    for (int i = 0; i < n; ++i) weight[members[static_cast<std::size_t>(i)]] = r.uniform() * 5;

    // Fail random subsets until one member is left.
    std::vector<std::int32_t> alive = members;
    while (alive.size() > 1) {
      r.shuffle(alive);
      const std::size_t k = 1 + r.below(alive.size() - 1);  // at least one survives
      const std::vector<std::int32_t> failed(alive.begin(), alive.begin() + static_cast<long>(k));
      alive.erase(alive.begin(), alive.begin() + static_cast<long>(k));
      std::vector<survivor> surv;
      for (auto m : alive) surv.push_back({m, r.below(5) == 0 ? 0.0 : weight[m]});

      const auto before = owners(work, batch);
      const auto p = migrate(work, failed, surv, batch);
      ++cases;
      CAPTURE(trial);
      // The property: every position of the step computed exactly once by the survivors.
      REQUIRE(check_exactly_once(p.work, batch) == "");
      REQUIRE(p.work.size() == alive.size());
      const auto after = owners(p.work, batch);
      const auto moved = owners(p.moved, batch);
      const auto dead = [&](std::int64_t q) {
        return q >= 0 && std::find(failed.begin(), failed.end(),
                                   before[static_cast<std::size_t>(q)]) != failed.end();
      };
      std::int64_t orphaned = 0;
      std::size_t orphan_runs = 0;  // maximal runs of consecutive orphaned positions
      for (std::int64_t pos = 0; pos < batch; ++pos) {
        const auto i = static_cast<std::size_t>(pos);
        if (dead(pos)) {
          ++orphaned;
          if (!dead(pos - 1)) ++orphan_runs;
          // Taken over by a survivor, and listed in `moved` for that survivor.
          CHECK(moved[i] == after[i]);
        } else {
          CHECK(moved[i] == -1);
          CHECK(after[i] == before[i]);  // a survivor keeps its own work
        }
      }
      CHECK(p.moved_samples == orphaned);
      moved_total += static_cast<int>(orphaned);
      // Moved work is proportional to the weights: within one sample of each quota.
      double wsum = 0;
      for (const auto& s : surv) wsum += s.weight;
      for (const auto& s : surv) {
        const auto* mv = find(p.moved, s.member);
        const double got = mv ? static_cast<double>(mv->samples()) : 0.0;
        const double quota = wsum > 0
                                 ? static_cast<double>(orphaned) * s.weight / wsum
                                 : static_cast<double>(orphaned) / static_cast<double>(surv.size());
        CHECK(std::abs(got - quota) < 1.0);
        // At most one piece per orphaned run: the pieces stay few.
        if (mv) CHECK(mv->ranges.size() <= orphan_runs);
      }
      // The next steps' split covers the batch, in survivor order.
      CHECK(p.next_members.size() == surv.size());
      CHECK(std::accumulate(p.next_split.begin(), p.next_split.end(), std::int64_t{0}) == batch);
      work = p.work;
    }
  }
  CHECK(cases > 500);
  CHECK(moved_total > 10000);  // the property was exercised on real work, not empty steps
}
