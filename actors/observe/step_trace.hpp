#pragma once
// Where a synchronous step's wall time goes, phase by phase: the job stamps the step's edges on
// its own thread, the workers their compute's start and end (step_done), the shards or members
// their gradient sum and optimizer seconds (applied). The phases tile the step exactly:
//
//   plan      the step boundary -> the step starts (0 when the plan was prefetched)
//   dispatch  the step starts -> the critical worker's compute starts (the go, its wake-up and,
//             without a prefetched plan, its gather)
//   compute   the critical worker's compute: the worker whose compute ended last
//   collect   its compute ends -> the job holds every step_done (the message, the job's wake-up)
//   sum       the gradient sum (the slowest shard's or member's)
//   apply     the optimizer (likewise)
//   exchange  the rest of the reduce phase: reduce_cmd and applied messages, waits for a core
//   stats     every applied -> the step boundary (statistics, metrics, checkpoints, policies)
//
// and `fixed` is the step's time minus the slowest worker's compute: what a step costs beyond
// the compute the data-parallel job cannot avoid. Steps whose membership changed mid-step are
// left out (their phases mix two plans).
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/clock.hpp"

namespace troupe::actors {

enum class step_phase : std::size_t {
  plan,
  dispatch,
  compute,
  collect,
  sum,
  apply,
  exchange,
  stats,
  step,
  fixed,
};
constexpr std::size_t step_phase_count = 10;
const char* name_of(step_phase p);

// Median seconds of each phase over the traced steps (the last `window` of them).
struct step_phase_medians {
  std::array<double, step_phase_count> seconds{};
  std::size_t steps = 0;  // how many steps the medians are of
  double operator[](step_phase p) const { return seconds[static_cast<std::size_t>(p)]; }
};

class step_trace {
 public:
  explicit step_trace(std::size_t window = 1024) : window_(window) {}

  // The job's edges, in step order. begin() also closes the previous step, whose time runs
  // from its begin to this one.
  void begin(steady::time_point now);
  void worker_done(std::int64_t compute_start_ns, std::int64_t compute_end_ns);
  void all_done(steady::time_point now);
  void applied(double sum_seconds, double apply_seconds);
  void all_applied(steady::time_point now);
  void boundary(steady::time_point now);
  // The open step is not traced (a member was lost or joined during it).
  void void_step() { open_.valid = false; }
  // The job ends: the last step closes at its boundary (no next begin).
  void finish();

  step_phase_medians medians() const;
  std::size_t traced() const { return done_.size(); }

 private:
  struct open_step {
    bool valid = false;
    steady::time_point begin, all_done, all_applied, boundary;
    bool has_all_done = false, has_applied = false, has_boundary = false;
    std::int64_t critical_start_ns = 0, critical_end_ns = 0;
    double max_compute = 0.0, sum = 0.0, apply = 0.0;
  };
  void close(steady::time_point next_begin);

  std::size_t window_;
  open_step open_;
  std::vector<std::array<double, step_phase_count>> done_;  // a ring of `window_`
  std::size_t next_ = 0;
};

// "plan 3 dispatch 41 compute 1210 ..." in microseconds, for logs and `troupe run`'s summary.
std::string phase_line(const step_phase_medians& m);

}  // namespace troupe::actors
