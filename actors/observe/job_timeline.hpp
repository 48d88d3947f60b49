#pragma once
// A job's course for its report and the dashboard (no CAF): the step series, thinned to a
// bounded number of points, and the events (failures, detections, recoveries, restarts,
// membership changes, rebalances, a resume), bounded too. A job runs for days: neither may grow
// with its steps.
//
// Thinning: a step is kept when step % every == 0; when the points reach `max_points`, every
// other one goes and `every` doubles, so the kept points stay evenly spaced in steps. The last
// step is always kept (finish()).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "actors/common/live_metrics.hpp"
#include "actors/common/report.hpp"

namespace troupe::actors {

class job_timeline {
 public:
  explicit job_timeline(std::size_t max_points = 1000, std::size_t max_events = 1000)
      : max_points_(max_points), max_events_(max_events) {}

  void set_names(std::vector<std::string> groups, std::vector<std::string> workers);
  void step(const series_point& p);
  // A step as live metrics report it (the job's own record, and what a service sees). Groups
  // and workers not named yet are named from it (workers "rank R": live metrics carry no
  // worker names).
  void step(const live_metrics& m);
  // Adds the last step given to step(), if thinning skipped it.
  void finish();
  // Past max_events, the newest events are dropped and counted in one last event.
  void event(job_event e);

  const job_series& series() const { return series_; }
  const std::vector<job_event>& events() const { return events_; }
  // Events dropped beyond max_events.
  std::int64_t dropped() const { return dropped_; }

 private:
  std::size_t max_points_, max_events_;
  job_series series_;
  series_point last_;
  bool any_ = false;
  std::vector<job_event> events_;
  std::int64_t dropped_ = 0;
};

}  // namespace troupe::actors
