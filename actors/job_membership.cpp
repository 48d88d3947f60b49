#include "actors/job_membership.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "actors/job.hpp"
#include "actors/job_messages.hpp"
#include "data/split.hpp"

namespace troupe::actors {
namespace {

double now_s(job_self self) {
  return seconds_since(self->state.job_t0);
}

// The step in flight was handed out and is not applied yet.
bool step_live(job_self self) {
  return self->state.pending_done > 0 || self->state.pending_applied > 0;
}

void recount(job_self self) {
  auto& mb = self->state.mem;
  int n = static_cast<int>(mb.orphans.size());
  for (const auto& q : mb.owed) n += static_cast<int>(q.size());
  self->state.pending_done = n;
}

void arm_deadline(job_self self) {
  auto& st = self->state;
  auto t = tagged<msg::step_timeout>(self);
  t.step = st.step;
  t.seq = ++st.mem.seq;
  self->delayed_send(self, to_timespan(st.mem.deadline.deadline()), t);
}

caf::actor supervisor_of(job_self self, std::size_t rank) {
  for (const auto& slot : self->state.launch.slots)
    if (slot.group.name == self->state.workers[rank].group) return slot.supervisor;
  return {};
}

std::string member_list(job_self self) {
  std::string out;
  for (std::size_t r = 0; r < self->state.workers.size(); ++r)
    if (is_member(self, r)) out += " " + self->state.workers[r].name;
  return out.empty() ? " (none)" : out;
}

// A new epoch: the shards and the distributor follow it, the prefetched plan (split over the old
// members) is void, and the plan the job waits for is asked again with the new split.
void change_membership(job_self self) {
  auto& st = self->state;
  st.gate.advance_to(st.gate.epoch() + 1);
  for (auto& s : st.shards) self->send(s, msg::start_atom_v, st.gate.epoch());
  st.next_plan.reset();
  const auto weights = member_weights(self);
  log(self,
      "membership epoch " + std::to_string(st.gate.epoch()) + ": members" + member_list(self));
  if (std::none_of(weights.begin(), weights.end(), [](double w) { return w > 0; })) return;
  auto upd = tagged<msg::split_update>(self);
  upd.weights = weights;
  self->send(st.distributor, upd);
  const auto want = step_live(self) ? st.step + 1 : st.step;
  if (want < st.steps_total) {
    auto req = tagged<msg::plan_request>(self);
    req.step = want;
    self->send(st.distributor, req);
  }
}

// The failed ranks' slices go to the members, by their weights, with the same sample indices.
void replan_orphans(job_self self) {
  auto& st = self->state;
  auto& mb = st.mem;
  const auto weights = member_weights(self);
  if (mb.orphans.empty() ||
      std::none_of(weights.begin(), weights.end(), [](double w) { return w > 0; }))
    return;
  std::string text = "step " + std::to_string(st.step) + " re-planned:";
  for (const auto& p : mb.orphans) {
    const auto counts = data::split_weighted(p.count, weights);
    std::int64_t offset = p.offset;
    for (std::size_t q = 0; q < counts.size(); ++q) {
      if (counts[q] <= 0) continue;
      auto cmd = tagged<msg::compute_cmd>(self);
      cmd.step = st.step;
      cmd.version = st.step;
      cmd.rank = static_cast<std::int32_t>(q);
      cmd.offset = offset;
      cmd.count = counts[q];
      self->send(st.workers[q].actor, cmd, mb.indices);
      mb.owed[q].push_back({offset, counts[q]});
      text += " " + st.workers[q].name + "+" + std::to_string(counts[q]);
      offset += counts[q];
    }
  }
  mb.orphans.clear();
  recount(self);
  log(self, text);
  arm_deadline(self);
}

}  // namespace

void membership_init(job_self self, double watchdog_seconds) {
  auto& st = self->state;
  auto& mb = st.mem;
  const auto n = st.workers.size();
  mb.status.assign(n, member_status::member);
  mb.owed.assign(n, {});
  mb.reported_at.assign(n, -1.0);
  policies::deadline_params dp;
  dp.initial_seconds = std::min(dp.initial_seconds, watchdog_seconds);
  mb.deadline = policies::step_deadline(dp);
}

bool is_member(job_self self, std::size_t rank) {
  const auto& s = self->state.mem.status;
  return rank < s.size() && s[rank] == member_status::member;
}

std::vector<double> member_weights(job_self self) {
  auto w = self->state.weights;
  for (std::size_t r = 0; r < w.size(); ++r)
    if (!is_member(self, r)) w[r] = 0.0;
  return w;
}

void step_begun(job_self self, const msg::local_ref<msg::index_list>& indices) {
  auto& st = self->state;
  auto& mb = st.mem;
  mb.indices = indices;
  mb.results.clear();
  mb.orphans.clear();
  mb.step_epoch = st.gate.epoch();
  mb.step_failed = false;
  std::int64_t offset = 0;
  for (std::size_t r = 0; r < mb.owed.size(); ++r) {
    mb.owed[r].clear();
    const auto count = st.plan.counts[r];
    if (count > 0) mb.owed[r].push_back({offset, count});
    offset += count;
  }
  recount(self);
  arm_deadline(self);
}

bool accept_result(job_self self, const msg::step_done& m,
                   const std::shared_ptr<const std::vector<float>>& grad) {
  auto& st = self->state;
  auto& mb = st.mem;
  if (!st.gate.admit_since(m, mb.step_epoch)) return false;
  const auto r = static_cast<std::size_t>(m.rank);
  if (st.phase != job_phase::running || m.step != st.step || m.rank < 0 || r >= mb.owed.size() ||
      mb.owed[r].empty() ||
      caf::actor_cast<caf::actor>(self->current_sender()) != st.workers[r].actor)
    return false;
  const auto piece = mb.owed[r].front();
  mb.owed[r].pop_front();
  mb.results[piece.offset] = slice_result{m.rank, grad};
  recount(self);
  if (st.pending_done == 0 && !mb.step_failed) mb.deadline.observe(seconds_since(st.step_t0));
  return true;
}

void reduce_sent(job_self self) {
  self->state.mem.reduce_epoch = self->state.gate.epoch();
}

void step_completed(job_self self) {
  auto& st = self->state;
  auto& mb = st.mem;
  const double now = now_s(self);
  for (double t : mb.open_recoveries) mb.report.recovery_ms.push_back((now - t) * 1e3);
  mb.open_recoveries.clear();
  std::int64_t planned = 0;
  for (auto c : st.plan.counts) planned += c;
  if (static_cast<std::int64_t>(st.step_stats.samples) < planned) ++mb.report.lost_steps;
}

std::optional<std::string> on_worker_down(job_self self, const msg::worker_down& m) {
  auto& st = self->state;
  auto& mb = st.mem;
  if (m.job != st.gate.job() || m.rank < 0 || static_cast<std::size_t>(m.rank) >= st.workers.size())
    return std::nullopt;
  const auto r = static_cast<std::size_t>(m.rank);
  const auto& name = st.workers[r].name;
  const std::string what = "worker " + name + " " + m.kind + ": " + m.reason;
  if (m.kind == "input" || m.action == "fail-job" || st.allreduce || st.local ||
      st.phase != job_phase::running || mb.status.size() != st.workers.size())
    return what + (m.decision.empty() ? "" : " (" + m.decision + ")");
  if (mb.status[r] == member_status::migrated) return std::nullopt;
  const double detected = mb.reported_at[r] >= 0 ? mb.reported_at[r] : now_s(self);
  mb.reported_at[r] = -1.0;
  ++mb.report.failures;
  ++mb.report.failures_by_class[m.kind];
  mb.open_recoveries.push_back(detected);
  const bool was_member = mb.status[r] == member_status::member;
  std::string text = "failure: " + what + "; " + m.decision;
  if (m.action == "restart") {
    mb.status[r] = member_status::restarting;
    ++mb.report.restarts;
  } else {
    mb.status[r] = member_status::migrated;
    const bool others = std::any_of(mb.status.begin(), mb.status.end(),
                                    [](member_status s) { return s != member_status::migrated; });
    if (!others && ++mb.last_worker_restarts > last_worker_restart_limit) {
      return what + " (" + m.decision + "); no other worker is left, and the last one failed " +
             std::to_string(last_worker_restart_limit) + " more times after its restarts ran out";
    }
    if (!others) {
      // Nobody left to migrate to: restart the last one past its intensity, a bounded number of
      // times (above), so that a worker that always fails ends the job instead of looping.
      mb.status[r] = member_status::restarting;
      ++mb.report.restarts;
      self->send(supervisor_of(self, r), msg::restart_worker{st.gate.job(), m.epoch, m.rank});
      text += "; the last worker: restarted instead of migrated";
    } else {
      ++mb.report.migrations;
      text += "; its share moves to the other workers";
    }
  }
  log(self, text);
  for (const auto& p : mb.owed[r]) mb.orphans.push_back(p);
  mb.owed[r].clear();
  if (!mb.orphans.empty()) mb.step_failed = true;
  // A restarted worker waiting for the next step boundary is the only one left: the step in
  // flight cannot reach that boundary without it, so it joins now.
  bool promoted = false;
  if (std::none_of(mb.status.begin(), mb.status.end(),
                   [](member_status s) { return s == member_status::member; }))
    for (auto& s : mb.status)
      if (s == member_status::joining) {
        s = member_status::member;
        promoted = true;
      }
  if (was_member || promoted) change_membership(self);
  replan_orphans(self);
  recount(self);
  return std::nullopt;
}

void on_step_timeout(job_self self, const msg::step_timeout& t) {
  auto& st = self->state;
  auto& mb = st.mem;
  if (t.job != st.gate.job() || st.phase != job_phase::running || t.step != st.step ||
      t.seq != mb.seq || st.pending_done == 0)
    return;
  std::vector<std::size_t> silent;
  for (std::size_t r = 0; r < mb.owed.size(); ++r)
    if (is_member(self, r) && !mb.owed[r].empty() && mb.reported_at[r] < 0) silent.push_back(r);
  const double deadline = mb.deadline.deadline();
  const double now = now_s(self);
  for (auto r : silent) {
    // Every member of a group of two or more silent at once: the group is cut off.
    const auto& g = st.workers[r].group;
    int in_group = 0, silent_in_group = 0;
    for (std::size_t q = 0; q < st.workers.size(); ++q) {
      if (st.workers[q].group != g || !is_member(self, q)) continue;
      ++in_group;
      silent_in_group += std::find(silent.begin(), silent.end(), q) != silent.end();
    }
    auto f = tagged<msg::worker_failed>(self);
    f.rank = static_cast<std::int32_t>(r);
    f.kind = in_group >= 2 && silent_in_group == in_group ? "lost-group" : "hang";
    char buf[160];
    std::snprintf(buf, sizeof buf, "no answer to step %lld within the %.3f s deadline",
                  static_cast<long long>(st.step), deadline);
    f.reason = buf;
    mb.reported_at[r] = now;
    log(self, "worker " + st.workers[r].name + " " + f.kind + ": " + f.reason);
    self->send(supervisor_of(self, r), f);
  }
}

bool on_restarted_ready(job_self self, const msg::worker_ready& m) {
  auto& st = self->state;
  auto& mb = st.mem;
  if (m.job != st.gate.job() || m.rank < 0 || static_cast<std::size_t>(m.rank) >= mb.status.size())
    return false;
  const auto r = static_cast<std::size_t>(m.rank);
  if (mb.status[r] != member_status::restarting) return false;
  auto& w = st.workers[r];
  w.actor = caf::actor_cast<caf::actor>(self->current_sender());
  w.ready = true;
  w.capability = m.capability;
  mb.status[r] = member_status::joining;
  ++st.progress;
  const bool alone = std::none_of(mb.status.begin(), mb.status.end(),
                                  [](member_status s) { return s == member_status::member; });
  log(self, "worker " + w.name + " restarted" +
                (alone ? ": takes over the step in flight" : ": joins at the next step"));
  // With no member left, the step in flight waits for it: it joins at once.
  if (alone) {
    mb.status[r] = member_status::member;
    change_membership(self);
    replan_orphans(self);
  }
  return true;
}

bool join_at_boundary(job_self self) {
  auto& mb = self->state.mem;
  bool any = false;
  for (auto& s : mb.status)
    if (s == member_status::joining) {
      s = member_status::member;
      any = true;
    }
  if (any) change_membership(self);
  return any;
}

fault_report fault_summary(job_self self) {
  auto& st = self->state;
  auto r = st.mem.report;
  if (st.mem.plan) r.injected = st.mem.plan->injected(st.step);
  return r;
}

}  // namespace troupe::actors
