#include "actors/job/job_membership.hpp"

#include <algorithm>

#include "actors/common/specs.hpp"
#include "actors/job/job_leave_out.hpp"
#include "actors/job/job_messages.hpp"
#include "actors/job/job_reduce_recovery.hpp"
#include "actors/job/job_steps.hpp"

namespace troupe::actors {

generation_members generation_of(job_self self) {
  const auto& st = self->state;
  generation_members out;
  for (std::size_t r = 0; r < st.workers.size(); ++r) {
    bool in_agent = false;
    for (const auto& slot : st.launch.slots)
      if (slot.group.name == st.workers[r].group)
        in_agent = replica_in_agent(st.launch.cfg, slot.group);
    out.member.push_back(st.mem.size() == 0 || st.mem.is_member(r));
    out.in_agent.push_back(in_agent);
  }
  return out;
}

void change_membership(job_self self) {
  auto& st = self->state;
  st.gate.advance_to(st.gate.generation() + 1);
  st.sync->open_generation(self, st.gate.job(), st.gate.generation(), generation_of(self), false);
  st.next_plan.reset();
  const auto weights = st.mem.member_weights(st.weights);
  note_event(self, "membership",
             "membership generation " + std::to_string(st.gate.generation()) + ": members" +
                 st.mem.member_list());
  if (std::none_of(weights.begin(), weights.end(), [](double w) { return w > 0; })) return;
  auto upd = tagged<msg::split_update>(self);
  upd.weights = weights;
  self->send(st.distributor, upd);
  const auto want = step_live(self) ? st.step + 1 : st.step;
  if (want < st.steps_total) request_plan(self, want);
}

namespace {

double now_s(job_self self) {
  return seconds_since(self->state.clock.job_t0);
}

caf::actor supervisor_of(job_self self, std::size_t rank) {
  for (const auto& slot : self->state.launch.slots)
    if (slot.group.name == self->state.workers[rank].group) return slot.supervisor;
  return {};
}

// `spawned_in`: the generation of the failed worker's spawn, which a restart_worker names.
void apply(job_self self, const member_commands& c, msg::generation_id spawned_in = 0) {
  auto& st = self->state;
  for (auto rank : c.restart)
    self->send(supervisor_of(self, static_cast<std::size_t>(rank)),
               msg::restart_worker{st.gate.job(), spawned_in, rank});
  // The membership's own account: "failure: ..." for a lost member, "worker X restarted" when
  // one comes back.
  for (const auto& line : c.log)
    note_event(self,
               line.rfind("failure: ", 0) == 0                ? "failure"
               : line.find(" restarted") != std::string::npos ? "restart"
                                                              : "membership",
               line);
  if (c.new_generation) change_membership(self);
  for (const auto& a : c.replan) {
    auto cmd = tagged<msg::compute_cmd>(self);
    cmd.step = st.step;
    cmd.version = st.step;
    cmd.rank = a.rank;
    cmd.offset = a.piece.offset;
    cmd.count = a.piece.count;
    self->send(st.workers[static_cast<std::size_t>(a.rank)].actor, cmd, st.indices);
  }
  if (!c.replan_log.empty()) log(self, c.replan_log);
  if (c.arm_deadline) arm_deadline(self);
}

// The detection time of an injected fault on worker `rank`, if one fired on it and is unclaimed.
void note_detection(job_self self, std::size_t rank) {
  auto& st = self->state;
  if (!st.faults || rank >= st.workers.size()) return;
  if (const auto fired = st.faults->take_fired_at(st.workers[rank].name))
    st.mem.record_detection(seconds_since(*fired) * 1e3);
}

}  // namespace

bool any_member(job_self self) {
  auto& st = self->state;
  for (std::size_t r = 0; r < st.workers.size(); ++r)
    if (st.mem.is_member(r)) return true;
  return false;
}

void membership_start(job_self self) {
  auto& st = self->state;
  std::vector<std::string> names, groups;
  for (const auto& w : st.workers) {
    names.push_back(w.name);
    groups.push_back(w.group);
  }
  st.mem = membership(std::move(names), std::move(groups), st.launch.step_deadline_seconds,
                      st.launch.cfg.hang_floor_s);
  st.mem.set_block(st.reduction_block);
  st.reduce_deadline = policies::step_deadline(reduce_deadline_params(st.launch.cfg.hang_floor_s));
}

void arm_deadline(job_self self, std::optional<double> seconds) {
  auto& st = self->state;
  auto t = tagged<msg::step_timeout>(self);
  t.step = st.step;
  t.seq = st.mem.next_deadline_seq();
  self->delayed_send(self, to_timespan(seconds.value_or(st.mem.deadline_seconds())), t);
}

bool accept_result(job_self self, const msg::step_done& m,
                   const std::shared_ptr<const std::vector<float>>& grad) {
  auto& st = self->state;
  if (!st.gate.admit_since(m, st.step_generation)) return false;
  const auto r = static_cast<std::size_t>(m.rank);
  if (m.step != st.step || m.rank < 0 || r >= st.workers.size() ||
      caf::actor_cast<caf::actor>(self->current_sender()) != st.workers[r].actor)
    return false;
  return st.mem.accept(m.rank, grad, seconds_since(st.clock.step_t0));
}

std::optional<std::string> unhandled_failure(job_self self, const msg::worker_down& m) {
  auto& st = self->state;
  if (m.job != st.gate.job() || m.rank < 0 || static_cast<std::size_t>(m.rank) >= st.workers.size())
    return std::nullopt;
  const auto& name = st.workers[static_cast<std::size_t>(m.rank)].name;
  return "worker " + name + " " + msg::cause_name(m) + ": " + m.reason +
         (m.decision.empty() ? "" : " (" + m.decision + ")");
}

std::optional<std::string> on_worker_down(job_self self, const msg::worker_down& m) {
  auto& st = self->state;
  if (m.job != st.gate.job() || m.rank < 0 || static_cast<std::size_t>(m.rank) >= st.workers.size())
    return std::nullopt;
  note_detection(self, static_cast<std::size_t>(m.rank));
  if (m.bad_input || m.action == failure_policy::fail_job || !st.sync->survives_member_loss())
    return unhandled_failure(self, m);
  const bool live = step_live(self);
  const bool reducing = st.pending_applied > 0;
  leave_out_abandon(self);
  down_event e;
  e.rank = m.rank;
  e.kind = m.kind;
  e.restart = m.action == failure_policy::restart;
  e.reason = m.reason;
  e.decision = m.decision;
  auto c = st.mem.on_down(e, now_s(self), st.weights);
  if (c.fail) return c.fail;
  // A stress run that went on from the first replica back ended with another model and no error.
  if (!any_member(self) && !st.sync->survives_losing_every_member())
    return "every allreduce member was lost at once (the last: worker " +
           st.workers[static_cast<std::size_t>(m.rank)].name + " " + msg::cause_name(m) + ": " +
           m.reason + "); no replica in an agent is known to be at the step's start";
  // A member lost while the step computes, where the survivors cannot take its slices: the
  // whole step runs again (actors/job/job_reduce_recovery.hpp) instead.
  const bool rerun = c.new_generation && live && !reducing && !st.sync->regroups_lost_slices();
  if (rerun) {
    c.replan.clear();
    c.replan_log.clear();
    c.arm_deadline = false;
  }
  apply(self, c, m.generation);
  if (c.new_generation && reducing && st.sync->recovers_lost_reduction())
    reduce_recovery_begin(self, m.rank);
  else if (rerun)
    rerun_step(self, "worker " + st.workers[static_cast<std::size_t>(m.rank)].name +
                         " was lost while the step computes and its slices cannot be regrouped");
  return std::nullopt;
}

void on_step_timeout(job_self self, const msg::step_timeout& t) {
  auto& st = self->state;
  if (t.job != st.gate.job() || t.step != st.step) return;
  if (t.reducing) {
    reduce_deadline_passed(self, t.seq);
    return;
  }
  const auto v = st.mem.on_timeout(t.seq, now_s(self));
  if (v.wait_more > 0) {
    log(self, v.log);
    arm_deadline(self, v.wait_more);
    return;
  }
  for (const auto& s : v.silent)
    declare_failed(self, static_cast<std::size_t>(s.rank), s.kind, s.reason);
}

void declare_failed(job_self self, std::size_t rank, failure_class kind,
                    const std::string& reason) {
  auto& st = self->state;
  if (rank >= st.workers.size()) return;
  auto f = tagged<msg::worker_failed>(self);
  f.rank = static_cast<std::int32_t>(rank);
  f.kind = kind;
  f.reason = reason;
  note_detection(self, rank);
  log(self, "worker " + st.workers[rank].name + " " + name_of(kind) + ": " + reason);
  self->send(supervisor_of(self, rank), f);
}

bool on_restarted_ready(job_self self, const msg::worker_ready& m, const caf::actor& from) {
  auto& st = self->state;
  if (m.job != st.gate.job() || m.rank < 0 || static_cast<std::size_t>(m.rank) >= st.mem.size())
    return false;
  const auto c = st.mem.on_restarted_ready(m.rank, st.weights);
  if (!c) return false;
  auto& w = st.workers[static_cast<std::size_t>(m.rank)];
  w.actor = from;
  w.ready = true;
  w.capability = m.capability;
  ++st.progress;
  apply(self, *c);
  // A job paused below min_devices waits at the boundary: the worker joins now.
  if (st.paused) next_step(self);
  return true;
}

std::optional<std::string> replay_start_failures(job_self self) {
  auto& st = self->state;
  const auto downs = std::move(st.start_downs);
  const auto readies = std::move(st.start_readies);
  st.start_downs.clear();
  st.start_readies.clear();
  for (const auto& m : downs)
    if (auto why = on_worker_down(self, m)) return why;
  for (const auto& [m, from] : readies) on_restarted_ready(self, m, from);
  return std::nullopt;
}

bool join_at_boundary(job_self self) {
  auto& st = self->state;
  // Replicas (allreduce): a joining rank takes a member's parameters and optimizer state here,
  // where no worker applies. A restarted rank's stayed as they were when it failed.
  std::optional<std::size_t> reference;
  for (std::size_t r = 0; r < st.workers.size(); ++r)
    if (st.mem.status(r) == member_status::member) {
      reference = r;
      break;
    }
  if (reference)
    for (std::size_t r = 0; r < st.workers.size(); ++r)
      if (st.mem.status(r) == member_status::joining) st.sync->bring_up_to_date(r, *reference);
  if (!st.mem.join_at_boundary()) return false;
  change_membership(self);
  return true;
}

}  // namespace troupe::actors
