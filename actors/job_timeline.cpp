#include "actors/job_timeline.hpp"

namespace troupe::actors {

void job_timeline::set_names(std::vector<std::string> groups, std::vector<std::string> workers) {
  series_.groups = std::move(groups);
  series_.workers = std::move(workers);
}

void job_timeline::step(const series_point& p) {
  last_ = p;
  any_ = true;
  if (p.step % series_.every != 0) return;
  auto& pts = series_.points;
  pts.push_back(p);
  if (pts.size() < max_points_) return;
  // Keep the points whose step is a multiple of the doubled interval.
  series_.every *= 2;
  std::vector<series_point> kept;
  for (auto& q : pts)
    if (q.step % series_.every == 0) kept.push_back(std::move(q));
  pts = std::move(kept);
}

void job_timeline::finish() {
  auto& pts = series_.points;
  if (any_ && (pts.empty() || pts.back().step < last_.step)) pts.push_back(last_);
}

void job_timeline::event(job_event e) {
  if (events_.size() < max_events_) {
    events_.push_back(std::move(e));
    return;
  }
  ++dropped_;
}

}  // namespace troupe::actors
