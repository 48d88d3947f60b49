#pragma once
// Migrating a failed worker's share of a step to the survivors.
//
// A step's work is its run of B sample indices; a plan gives each member ranges of POSITIONS in
// that run ([begin, end) into the step's index list, never the data itself), the way
// data::cut_slices cuts it. Because the step's gradient is a sample-weighted sum, a step survives
// the loss of members: their positions are handed to the survivors and the step completes with
// exactly the same samples, each computed exactly once.
//
// migrate() keeps every survivor's own ranges (work it may already have done) and splits only the
// failed members' positions, concatenated in position order, among the survivors in proportion
// to their weights: survivor k (in the order given) takes the next c_k positions, where c is the
// largest-remainder split of the failed count. Every survivor already holds a slice proportional
// to its weight, so proportional extra work keeps their finish times equal. A survivor gets at
// most one piece per failed range, so the pieces stay few and contiguous. A second failure while
// recovering is the same call on the plan the first one returned: a survivor that fails later
// passes on its own ranges and the ones it had been given.
//
// When the survivors' partial results are lost too (an aborted collective that had already
// consumed them), the whole step is re-planned instead: assign_contiguous(next_members,
// next_split). Either way the next steps use next_split.
//
// Weights: a negative or non-finite weight is an error; when every survivor's weight is zero the
// split is even (a membership change is no place to fail on a degenerate weight vector).
#include <cstdint>
#include <string>
#include <vector>

namespace troupe::policies {

struct index_range {
  std::int64_t begin = 0;
  std::int64_t end = 0;  // exclusive
  std::int64_t size() const { return end - begin; }
  bool operator==(const index_range& o) const { return begin == o.begin && end == o.end; }
};

struct member_work {
  std::int32_t member = 0;          // the job's rank
  std::vector<index_range> ranges;  // sorted, disjoint, non-empty, adjacent ones merged
  std::int64_t samples() const;
};

// One step: the members' work, in member order as given.
using step_work = std::vector<member_work>;

// Largest remainder: floor(total * w_i / sum w), the leftover units to the largest fractional
// parts, ties to the lower index; zero weights get 0; with `min_one`, every positive weight gets
// at least 1 when total allows (taken from the slices furthest above their quota). The same rule
// as data::split_weighted (both call core/apportion.hpp). All-zero weights give
// an even split. Throws troupe::input_error on total < 0, no weights, a negative or non-finite
// weight.
std::vector<std::int64_t> split_by_weight(std::int64_t total, const std::vector<double>& weights,
                                          bool min_one = false);

// Member i gets the positions [sum of counts before i, + counts[i]) (data::cut_slices' order).
// Members with a zero count get no range but stay listed. Throws troupe::input_error on a size
// mismatch, a negative count or a repeated member.
step_work assign_contiguous(const std::vector<std::int32_t>& members,
                            const std::vector<std::int64_t>& counts);

struct survivor {
  std::int32_t member = 0;
  double weight = 1.0;
};

struct migration_plan {
  step_work work;   // the step after migration: the survivors in the order given, each with its
                    // own ranges plus what it took over; covers the same positions as before
  step_work moved;  // only the ranges newly given to each survivor (what to send it now);
                    // survivors that take nothing are left out
  std::int64_t moved_samples = 0;
  std::vector<std::int32_t> next_members;  // the survivors, in order
  std::vector<std::int64_t> next_split;    // split of next_batch for the next steps (min one
                                           // sample per positive weight, as the job splits)
};

// `current`: the step's plan; `failed`: members that will not report (members absent from
// `current` had no work and are simply dropped); `survivors`: every member that carries on, with
// its weight, each either in `current` or new with no work yet. `next_batch`: the global batch of
// the next steps. Throws troupe::input_error on: no survivors, a survivor that also failed or is
// repeated, a member of `current` that is neither failed nor a survivor (its work would be lost),
// overlapping or malformed ranges in `current`, or bad weights.
migration_plan migrate(const step_work& current, const std::vector<std::int32_t>& failed,
                       const std::vector<survivor>& survivors, std::int64_t next_batch);

// Checks that `work` covers exactly the positions [0, batch), each once (no gap, no overlap) and
// that every member's ranges are sorted, disjoint and non-empty. Returns an empty string when it
// does, else the first problem ("position 17 is computed by members 2 and 5").
std::string check_exactly_once(const step_work& work, std::int64_t batch);

}  // namespace troupe::policies
