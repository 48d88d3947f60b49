#include "actors/observe/step_trace.hpp"

#include <algorithm>
#include <cstdio>

#include "core/median.hpp"

namespace troupe::actors {
namespace {

double between(steady::time_point a, steady::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double ns_between(std::int64_t a, std::int64_t b) {
  return static_cast<double>(b - a) * 1e-9;
}

}  // namespace

const char* name_of(step_phase p) {
  static const char* names[] = {"plan",  "dispatch", "compute", "collect", "sum",
                                "apply", "exchange", "stats",   "step",    "fixed"};
  return names[static_cast<std::size_t>(p)];
}

void step_trace::begin(steady::time_point now) {
  close(now);
  open_ = {};
  open_.valid = true;
  open_.begin = now;
}

void step_trace::worker_done(std::int64_t start_ns, std::int64_t end_ns) {
  if (!open_.valid) return;
  if (start_ns <= 0 || end_ns < start_ns) {
    open_.valid = false;  // a worker that did not stamp its compute (an older peer)
    return;
  }
  open_.max_compute = std::max(open_.max_compute, ns_between(start_ns, end_ns));
  if (end_ns >= open_.critical_end_ns) {
    open_.critical_start_ns = start_ns;
    open_.critical_end_ns = end_ns;
  }
}

void step_trace::all_done(steady::time_point now) {
  open_.all_done = now;
  open_.has_all_done = true;
}

void step_trace::applied(double sum_seconds, double apply_seconds) {
  open_.sum = std::max(open_.sum, sum_seconds);
  open_.apply = std::max(open_.apply, apply_seconds);
}

void step_trace::all_applied(steady::time_point now) {
  open_.all_applied = now;
  open_.has_applied = true;
}

void step_trace::boundary(steady::time_point now) {
  open_.boundary = now;
  open_.has_boundary = true;
}

void step_trace::finish() {
  if (open_.has_boundary) close(open_.boundary);
  open_ = {};
}

void step_trace::close(steady::time_point next_begin) {
  const auto& o = open_;
  if (!o.valid || !o.has_all_done || !o.has_applied || !o.has_boundary || o.critical_end_ns == 0)
    return;
  std::array<double, step_phase_count> r{};
  auto at = [&r](step_phase p) -> double& { return r[static_cast<std::size_t>(p)]; };
  const std::int64_t begin_ns = steady_ns(o.begin), done_ns = steady_ns(o.all_done);
  at(step_phase::plan) = between(o.boundary, next_begin);
  at(step_phase::dispatch) = ns_between(begin_ns, o.critical_start_ns);
  at(step_phase::compute) = ns_between(o.critical_start_ns, o.critical_end_ns);
  at(step_phase::collect) = ns_between(o.critical_end_ns, done_ns);
  at(step_phase::sum) = o.sum;
  at(step_phase::apply) = o.apply;
  at(step_phase::exchange) = between(o.all_done, o.all_applied) - o.sum - o.apply;
  at(step_phase::stats) = between(o.all_applied, o.boundary);
  at(step_phase::step) = between(o.begin, next_begin);
  at(step_phase::fixed) = at(step_phase::step) - o.max_compute;
  if (done_.size() < window_)
    done_.push_back(r);
  else
    done_[next_ % window_] = r;
  ++next_;
}

step_phase_medians step_trace::medians() const {
  step_phase_medians m;
  m.steps = done_.size();
  if (done_.empty()) return m;
  std::vector<double> column(done_.size());
  for (std::size_t p = 0; p < step_phase_count; ++p) {
    for (std::size_t i = 0; i < done_.size(); ++i) column[i] = done_[i][p];
    m.seconds[p] = median(column);
  }
  return m;
}

std::string phase_line(const step_phase_medians& m) {
  std::string out;
  for (std::size_t p = 0; p < step_phase_count; ++p) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%s%s %.0f", p ? " " : "", name_of(static_cast<step_phase>(p)),
                  m.seconds[p] * 1e6);
    out += buf;
  }
  return out;
}

}  // namespace troupe::actors
