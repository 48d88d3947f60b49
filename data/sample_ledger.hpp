#pragma once
// The sample ledger: how many times each sample of the training set reached an applied step,
// pass by pass. It is the evidence behind "a fault costs time, never a sample": the job records
// the indices of every slice whose gradient was in an applied step (not the plan's intent), and
// the report counts samples trained twice in a pass, and samples a finished pass never trained.
//
// Counts saturate at 255 (more than enough to tell 1 from 2). One byte a sample: 60 KB for
// Fashion-MNIST, which a checkpoint carries so that a resumed run goes on counting the pass it
// was interrupted in.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace troupe::data {

struct ledger_totals {
  std::int64_t passes_checked = 0;  // passes that ended: every sample should count once
  std::int64_t counted_twice = 0;   // extra trainings of a sample within its pass (all passes)
  std::int64_t never_counted = 0;   // samples an ended pass did not train
  std::int64_t recorded = 0;        // sample trainings recorded by this ledger
};

class sample_ledger {
 public:
  explicit sample_ledger(std::size_t samples);

  std::size_t samples() const { return counts_.size(); }
  // The indices of an applied step's slice in pass `pass`. A later pass than the one in
  // progress ends it first (end_pass). Throws troupe::runtime_failure on an index out of range
  // or an earlier pass: either is a bug in the caller, not a count.
  void record(std::int64_t pass, const std::int64_t* indices, std::size_t count);
  // The pass in progress ended (its last step was applied): samples it never trained count now.
  // No effect when no pass is open.
  void end_pass();

  ledger_totals totals() const;

  // The pass in progress, for a checkpoint: its number (-1: none open) and its counts.
  std::int64_t open_pass() const { return pass_; }
  const std::vector<std::uint8_t>& counts() const { return counts_; }
  // Continues the counts a checkpoint holds for pass `pass`. Throws troupe::runtime_failure when
  // their length is not samples().
  void restore(std::int64_t pass, std::vector<std::uint8_t> counts);
  // A resume without counts (a checkpoint from before the ledger): the open pass's earlier steps
  // are unknown, so its end checks duplicates only.
  void resume_unknown(std::int64_t pass);

 private:
  std::vector<std::uint8_t> counts_;
  std::int64_t pass_ = -1;
  bool partial_ = false;  // the open pass began before the counts this ledger has
  ledger_totals totals_;
};

}  // namespace troupe::data
