#include "policies/migration.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/apportion.hpp"
#include "core/error.hpp"

namespace troupe::policies {
namespace {

[[noreturn]] void bad(const std::string& what) {
  throw input_error("migration: " + what);
}

// Appends [b, e) to `ranges`, merging with the last range when they touch.
void append(std::vector<index_range>& ranges, std::int64_t b, std::int64_t e) {
  if (b >= e) return;
  if (!ranges.empty() && ranges.back().end == b) {
    ranges.back().end = e;
    return;
  }
  ranges.push_back({b, e});
}

// Sorts and merges adjacent ranges (inputs are disjoint).
void normalise(std::vector<index_range>& ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](const index_range& a, const index_range& b) { return a.begin < b.begin; });
  std::vector<index_range> out;
  for (const auto& r : ranges) append(out, r.begin, r.end);
  ranges = std::move(out);
}

// Every member's ranges well formed and no position claimed twice across members.
void check_disjoint(const step_work& work) {
  std::vector<std::pair<index_range, std::int32_t>> all;
  for (const auto& m : work)
    for (const auto& r : m.ranges) {
      if (r.begin < 0 || r.end <= r.begin)
        bad("member " + std::to_string(m.member) + " has a malformed range [" +
            std::to_string(r.begin) + ", " + std::to_string(r.end) + ")");
      all.push_back({r, m.member});
    }
  std::sort(all.begin(), all.end(),
            [](const auto& a, const auto& b) { return a.first.begin < b.first.begin; });
  for (std::size_t i = 1; i < all.size(); ++i)
    if (all[i].first.begin < all[i - 1].first.end)
      bad("position " + std::to_string(all[i].first.begin) + " is planned for members " +
          std::to_string(all[i - 1].second) + " and " + std::to_string(all[i].second));
}

}  // namespace

std::int64_t member_work::samples() const {
  std::int64_t n = 0;
  for (const auto& r : ranges) n += r.size();
  return n;
}

std::vector<std::int64_t> split_by_weight(std::int64_t total, const std::vector<double>& weights,
                                          bool min_one) {
  if (total < 0) bad("cannot split a negative count " + std::to_string(total));
  if (weights.empty()) bad("no members to split among");
  bool any_positive = false;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (!std::isfinite(weights[i]) || weights[i] < 0)
      bad("weight " + std::to_string(i) + " = " + std::to_string(weights[i]) +
          " is negative or not finite");
    any_positive = any_positive || weights[i] > 0;
  }
  // All survivors at weight zero: split evenly rather than fail a recovery.
  if (!any_positive) return apportion(total, std::vector<double>(weights.size(), 1.0), min_one);
  return apportion(total, weights, min_one);
}

step_work assign_contiguous(const std::vector<std::int32_t>& members,
                            const std::vector<std::int64_t>& counts) {
  if (members.size() != counts.size())
    bad(std::to_string(members.size()) + " members but " + std::to_string(counts.size()) +
        " counts");
  std::set<std::int32_t> seen;
  step_work out;
  std::int64_t at = 0;
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (!seen.insert(members[i]).second) bad("member " + std::to_string(members[i]) + " repeated");
    if (counts[i] < 0) bad("negative count for member " + std::to_string(members[i]));
    member_work m;
    m.member = members[i];
    append(m.ranges, at, at + counts[i]);
    at += counts[i];
    out.push_back(std::move(m));
  }
  return out;
}

migration_plan migrate(const step_work& current, const std::vector<std::int32_t>& failed,
                       const std::vector<survivor>& survivors, std::int64_t next_batch) {
  if (survivors.empty()) bad("no surviving members to take over the work");
  if (next_batch < 0) bad("negative next batch " + std::to_string(next_batch));
  check_disjoint(current);
  const std::set<std::int32_t> failed_set(failed.begin(), failed.end());
  std::map<std::int32_t, std::size_t> survivor_at;
  for (std::size_t i = 0; i < survivors.size(); ++i) {
    const auto m = survivors[i].member;
    if (failed_set.count(m)) bad("member " + std::to_string(m) + " both failed and survives");
    if (!survivor_at.emplace(m, i).second) bad("survivor " + std::to_string(m) + " repeated");
  }

  migration_plan plan;
  plan.work.resize(survivors.size());
  std::vector<index_range> orphaned;  // positions whose member failed
  for (std::size_t i = 0; i < survivors.size(); ++i) plan.work[i].member = survivors[i].member;
  for (const auto& m : current) {
    if (failed_set.count(m.member)) {
      orphaned.insert(orphaned.end(), m.ranges.begin(), m.ranges.end());
      continue;
    }
    const auto it = survivor_at.find(m.member);
    if (it == survivor_at.end())
      bad("member " + std::to_string(m.member) +
          " is neither failed nor a survivor: its work would be lost");
    plan.work[it->second].ranges = m.ranges;
    normalise(plan.work[it->second].ranges);
  }
  normalise(orphaned);

  std::vector<double> weights;
  for (const auto& s : survivors) weights.push_back(s.weight);
  std::int64_t orphaned_count = 0;
  for (const auto& r : orphaned) orphaned_count += r.size();
  const auto extra = split_by_weight(orphaned_count, weights);

  // Walk the orphaned positions in order, handing survivor k its next extra[k] of them.
  std::size_t ri = 0;
  std::int64_t pos = orphaned.empty() ? 0 : orphaned[0].begin;
  for (std::size_t k = 0; k < survivors.size(); ++k) {
    std::int64_t need = extra[k];
    member_work given;
    given.member = survivors[k].member;
    while (need > 0) {
      const std::int64_t take = std::min(need, orphaned[ri].end - pos);
      append(given.ranges, pos, pos + take);
      pos += take;
      need -= take;
      if (pos == orphaned[ri].end && ++ri < orphaned.size()) pos = orphaned[ri].begin;
    }
    if (given.ranges.empty()) continue;
    auto& mine = plan.work[k].ranges;
    mine.insert(mine.end(), given.ranges.begin(), given.ranges.end());
    normalise(mine);
    plan.moved_samples += given.samples();
    plan.moved.push_back(std::move(given));
  }

  for (const auto& s : survivors) plan.next_members.push_back(s.member);
  plan.next_split = split_by_weight(next_batch, weights, true);
  return plan;
}

std::string check_exactly_once(const step_work& work, std::int64_t batch) {
  std::vector<std::pair<index_range, std::int32_t>> all;
  for (const auto& m : work) {
    for (std::size_t i = 0; i < m.ranges.size(); ++i) {
      const auto& r = m.ranges[i];
      if (r.begin < 0)
        return "member " + std::to_string(m.member) + " has a negative position " +
               std::to_string(r.begin);
      if (r.end <= r.begin)
        return "member " + std::to_string(m.member) + " has an empty or reversed range [" +
               std::to_string(r.begin) + ", " + std::to_string(r.end) + ")";
      if (i > 0 && r.begin <= m.ranges[i - 1].end)
        return "member " + std::to_string(m.member) +
               "'s ranges are not sorted, disjoint and merged";
      all.push_back({r, m.member});
    }
  }
  std::sort(all.begin(), all.end(),
            [](const auto& a, const auto& b) { return a.first.begin < b.first.begin; });
  std::int64_t at = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto& r = all[i].first;
    if (r.begin > at)
      return "positions [" + std::to_string(at) + ", " + std::to_string(r.begin) +
             ") are computed by no member";
    if (r.begin < at)
      return "position " + std::to_string(r.begin) + " is computed by members " +
             std::to_string(all[i - 1].second) + " and " + std::to_string(all[i].second);
    at = r.end;
  }
  if (at != batch)
    return at < batch ? "positions [" + std::to_string(at) + ", " + std::to_string(batch) +
                            ") are computed by no member"
                      : "positions reach " + std::to_string(at) + ", past the batch " +
                            std::to_string(batch);
  return "";
}

}  // namespace troupe::policies
