#include "actors/observe/job_timeline.hpp"

#include <algorithm>

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

void job_timeline::step(const live_metrics& m) {
  if (series_.groups.empty())
    for (const auto& [group, n] : m.split) series_.groups.push_back(group);
  if (series_.workers.empty())
    for (std::size_t r = 0; r < m.worker_compute_seconds.size(); ++r)
      series_.workers.push_back("rank " + std::to_string(r));
  series_point p;
  p.t = m.elapsed_seconds;
  p.step = m.step;
  p.loss = m.loss;
  std::int64_t samples = 0;
  p.split.assign(series_.groups.size(), 0);
  for (const auto& [group, n] : m.split) {
    samples += n;
    const auto at = std::find(series_.groups.begin(), series_.groups.end(), group);
    if (at != series_.groups.end())
      p.split[static_cast<std::size_t>(at - series_.groups.begin())] += n;
  }
  p.samples_per_second = m.step_seconds > 0 ? static_cast<double>(samples) / m.step_seconds : 0;
  for (const auto c : m.worker_compute_seconds)
    p.busy.push_back(m.step_seconds > 0 ? std::min(1.0, c / m.step_seconds) : 0.0);
  p.share = m.share;
  p.sync_period = m.sync_period;
  step(p);
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
