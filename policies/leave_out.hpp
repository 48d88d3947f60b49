#pragma once
// Leaving out devices that cost the step more than they add. A device far slower than the
// others (a CPU core beside a GPU) gets a sliver of each batch from the adaptive split, but it
// still takes part in every step's synchronisation: its gradient is pushed and summed, and the
// step waits for its answer. When that costs more than its samples add, the job trains faster
// without it. Neither cost is in the split's compute model, so the policy measures instead: a
// window of steps with every member, then a window without the candidates, and it keeps the
// faster arrangement. The trial runs once a job; its figures go to the log and the report.
//
//   steps [first_step, first_step + window)   with everyone: samples/s of each step, and each
//                                             member's fraction of the samples
//   candidates: members with a fraction below max_share (and at least one member stays)
//   -> set_aside (at the next boundary; the step after it is not measured: it pays for the
//      membership change)
//   the next `window` steps                   without the candidates
//   median without > median with x (1 + min_gain): they stay out (left_out); else bring_back
//
// A failure during the trial abandons it (the job brings the candidates back at once).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace troupe::policies {

struct leave_out_options {
  std::int64_t first_step = 15;  // start-up and the adaptive split's first moves are over
  std::int64_t window = 15;      // steps measured with, and again without, the candidates
  double max_share = 0.05;       // a candidate computed less than this fraction of the samples
  double min_gain = 0.0;         // how much faster without them must be
};

struct leave_out_verdict {
  std::vector<std::int32_t> ranks;  // the candidates
  double share = 0.0;               // their fraction of the samples, with everyone
  double with_sps = 0.0;            // median samples/s of a step, with everyone
  double without_sps = 0.0;         // and without the candidates
  std::int64_t window = 0;          // steps each median is over
  bool left_out = false;
};

class leave_out_trial {
 public:
  enum class action { none, set_aside, bring_back };

  // Throws troupe::input_error on first_step < 0, window < 2, max_share outside (0, 1) or
  // min_gain < 0.
  leave_out_trial(leave_out_options o, std::size_t ranks);

  // Step `step` (0-based) completed in `seconds`; `rank_samples`: what each rank computed (0
  // for non-members). What to do at the boundary that follows.
  action on_step(std::int64_t step, double seconds, const std::vector<std::int64_t>& rank_samples);
  // A failure: no trial from now on. bring_back when the candidates are out for the trial.
  action abandon();

  const std::vector<std::int32_t>& candidates() const { return candidates_; }
  const std::optional<leave_out_verdict>& verdict() const { return verdict_; }
  // Measuring (with or without the candidates); finished: decided, abandoned or no candidate.
  bool active() const { return phase_ == phase::with || phase_ == phase::without; }
  bool finished() const { return phase_ == phase::done; }

 private:
  enum class phase { waiting, with, without, done };
  leave_out_options o_;
  phase phase_ = phase::waiting;
  std::vector<std::int64_t> samples_by_rank_;
  std::vector<double> with_, without_;
  std::int64_t without_from_ = 0;
  std::vector<std::int32_t> candidates_;
  std::optional<leave_out_verdict> verdict_;
};

// "left out cpu/0 cpu/1: 566505 samples/s without them against 454985 with them (medians of 15
// steps); they computed 3.2% of the samples", or "kept ...". names: by rank.
std::string describe(const leave_out_verdict& v, const std::vector<std::string>& names);

}  // namespace troupe::policies
