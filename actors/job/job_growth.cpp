#include "actors/job/job_growth.hpp"

#include "actors/job/job_membership.hpp"
#include "actors/job/job_messages.hpp"
#include "actors/job/job_start.hpp"
#include "actors/job/job_steps.hpp"

namespace troupe::actors {
namespace {

void grow(job_self self, const group_slot& slot) {
  auto& st = self->state;
  const auto& cfg = st.launch.cfg;
  const int cap = cfg.elastic ? cfg.elastic->max_devices : 0;
  int devices = 0;
  for (std::size_t r = 0; r < st.workers.size(); ++r)
    if (st.mem.status(r) != member_status::migrated) ++devices;
  st.launch.slots.push_back(slot);  // the supervisor of its ranks (supervisor_of)
  for (int dev : slot.devices) {
    const auto name = slot.group.name + "/" + std::to_string(dev);
    if (devices >= cap) {
      log(self, "device " + name + " not taken: the job has max_devices " + std::to_string(cap));
      continue;
    }
    if (!spawn_worker(self, slot, dev)) return;
    const auto rank = st.mem.add_rank(name, slot.group.name);
    st.weights.push_back(slot.group.weight.value_or(1.0));
    ++devices;
    log(self, "device " + name + " joins the job as rank " + std::to_string(rank) + " at step " +
                  std::to_string(st.step));
  }
  // The step in flight (and a prefetched plan) were cut for the old ranks: the new ones owe
  // nothing there.
  st.plan.counts.resize(st.workers.size(), 0);
  st.grads.resize(st.workers.size());
  // The rebalancer fits one model per rank: a new one for the new ranks.
  if (st.rebalancer) start_rebalancer(self);
}

}  // namespace

void on_group_joined(job_self self, const group_slot& slot) {
  auto& st = self->state;
  if (st.phase == job_phase::running || st.phase == job_phase::draining)
    grow(self, slot);
  else if (st.phase == job_phase::loading || st.phase == job_phase::spawning ||
           st.phase == job_phase::probing)
    st.waiting_groups.push_back(slot);
}

caf::result<bool> on_group_leave(job_self self, const std::string& group) {
  auto& st = self->state;
  bool holds = false;
  for (std::size_t r = 0; r < st.workers.size(); ++r)
    holds = holds || (st.workers[r].group == group && st.mem.status(r) != member_status::migrated);
  if (!holds) return true;
  if (st.phase != job_phase::running) return false;
  auto promise = self->make_response_promise();
  st.leaving.emplace_back(group, promise);
  log(self, "group '" + group + "' asked to leave: it leaves at the next step boundary");
  return promise;
}

bool groups_leave_at_boundary(job_self self) {
  auto& st = self->state;
  // Not while a checkpoint is being captured: the member asked for its part may be leaving.
  if (st.leaving.empty() || !st.sync->at_capture_point() || st.ckpt.cycle.in_flight()) return false;
  auto leaving = std::move(st.leaving);
  st.leaving.clear();
  const auto leaves = [&](std::size_t r) {
    for (const auto& [group, promise] : leaving)
      if (st.workers[r].group == group) return true;
    return false;
  };
  bool others = false;
  for (std::size_t r = 0; r < st.workers.size(); ++r)
    others = others || (!leaves(r) && st.mem.is_member(r));
  if (!others) {
    log(self, "no member would be left at step " + std::to_string(st.step) +
                  ": the leaving group is lost instead, by the supervision policy");
    for (auto& [group, promise] : leaving) promise.deliver(false);
    return false;
  }
  std::string who;
  for (std::size_t r = 0; r < st.workers.size(); ++r)
    if (leaves(r) && st.mem.leave(static_cast<std::int32_t>(r))) who += " " + st.workers[r].name;
  // Their supervisor forgets them first, so that their end is no failure.
  auto rel = tagged<msg::release>(self);
  for (const auto& [group, promise] : leaving)
    for (const auto& slot : st.launch.slots)
      if (slot.group.name == group) self->send(slot.supervisor, rel);
  note_event(self, "left", "left at step " + std::to_string(st.step) + ":" + who);
  change_membership(self);
  for (auto& [group, promise] : leaving) promise.deliver(true);
  return true;
}

void answer_group_leaves(job_self self) {
  for (auto& [group, promise] : self->state.leaving) promise.deliver(true);
  self->state.leaving.clear();
}

void take_waiting_groups(job_self self) {
  auto waiting = std::move(self->state.waiting_groups);
  self->state.waiting_groups.clear();
  for (const auto& slot : waiting) grow(self, slot);
}

}  // namespace troupe::actors
