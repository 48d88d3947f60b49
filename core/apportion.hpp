#pragma once
// Largest-remainder apportionment: splits a count among weighted members so the parts sum
// exactly to it. The one rule behind data::split_weighted (batch slices) and
// policies::split_by_weight (re-planning a failed member's samples), which live in rooms that
// cannot see each other.
#include <cstdint>
#include <vector>

namespace troupe {

// Each member gets floor(total * w_i / sum w); the units left go to the largest fractional
// parts (ties to the lower index), and float error in the quotas is settled in either direction,
// so the result always sums to `total`. A zero weight gets nothing, except that with `min_one`
// and total >= the number of positive weights, every positive weight gets at least one unit,
// taken from the member furthest above its quota.
// Preconditions (callers validate and word their own errors): total >= 0, weights finite and
// non-negative with at least one positive.
std::vector<std::int64_t> apportion(std::int64_t total, const std::vector<double>& weights,
                                    bool min_one);

}  // namespace troupe
