#include "actors/job/job_leave_out.hpp"

#include <cstdio>
#include <utility>
#include <vector>

#include "actors/job/job_membership.hpp"
#include "actors/job/job_messages.hpp"

namespace troupe::actors {

using action = policies::leave_out_trial::action;

void leave_out_start(job_self self) {
  auto& st = self->state;
  const auto& cfg = st.launch.cfg;
  policies::leave_out_options lo;
  // Local SGD's replicas are each their own: a member set aside could not be brought back.
  if (cfg.data.split == split_kind::adaptive && cfg.data.leave_out &&
      cfg.sync.mode != sync_mode::local && st.sync->survives_member_loss() && !cfg.deterministic &&
      st.workers.size() > 1 && st.steps_total - st.step > lo.first_step + 2 * lo.window + 10) {
    lo.first_step += st.step;  // a resumed job settles again first
    st.leave_out.emplace(lo, st.workers.size());
  }
}

void leave_out_step(job_self self, double step_s) {
  auto& st = self->state;
  if (!st.leave_out || st.leave_out->finished()) return;
  std::vector<std::int64_t> counts(st.workers.size(), 0);
  for (std::size_t r = 0; r < counts.size() && r < st.plan.counts.size(); ++r)
    if (st.mem.is_member(r)) counts[r] = st.plan.counts[r];
  const auto a = st.leave_out->on_step(st.step, step_s, counts);
  if (a != action::none) st.leave_out_next = a;
  if (st.leave_out->finished() && st.leave_out->verdict())
    log(self, "leave-out trial: " + policies::describe(*st.leave_out->verdict(), worker_names(st)));
}

bool leave_out_at_boundary(job_self self) {
  auto& st = self->state;
  const auto a = std::exchange(st.leave_out_next, action::none);
  if (a == action::none || !st.leave_out) return false;
  if (a == action::bring_back) {
    for (auto r : st.leave_out->candidates()) st.mem.bring_back(r);
    return false;
  }
  bool any = false;
  std::string who;
  for (auto r : st.leave_out->candidates()) {
    any = st.mem.set_aside(r) || any;
    who += " " + st.workers[static_cast<std::size_t>(r)].name;
  }
  if (!any) return false;
  char buf[160];
  std::snprintf(buf, sizeof buf, " (%.1f%% of the samples; %.0f samples/s with them)",
                100.0 * st.leave_out->verdict()->share, st.leave_out->verdict()->with_sps);
  log(self, "leave-out trial: the next steps without" + who + buf);
  change_membership(self);
  return true;
}

void leave_out_abandon(job_self self) {
  auto& st = self->state;
  if (!st.leave_out || !st.leave_out->active()) return;
  st.leave_out_next = action::none;
  const auto candidates = st.leave_out->candidates();
  if (st.leave_out->abandon() != action::bring_back) return;
  for (auto r : candidates) st.mem.bring_back(r);
  log(self, "leave-out trial abandoned after a failure: the members it set aside rejoin");
}

void leave_out_report(const job_state& st, job_report& r) {
  if (!st.leave_out || !st.leave_out->verdict()) return;
  const auto& v = *st.leave_out->verdict();
  job_report::leave_out l;
  for (auto rank : v.ranks) l.workers.push_back(st.workers[static_cast<std::size_t>(rank)].name);
  l.left_out = v.left_out;
  l.share = v.share;
  l.with_sps = v.with_sps;
  l.without_sps = v.without_sps;
  l.reason = policies::describe(v, worker_names(st));
  r.leave_out_trial = l;
}

}  // namespace troupe::actors
