#include "actors/job/job_steps.hpp"

#include <chrono>
#include <cstdio>
#include <exception>

#include "actors/job/job_checkpoint.hpp"
#include "actors/job/job_evaluation.hpp"
#include "actors/job/job_growth.hpp"
#include "actors/job/job_leave_out.hpp"
#include "actors/job/job_membership.hpp"
#include "actors/job/job_messages.hpp"
#include "actors/job/job_reduce_recovery.hpp"
#include "actors/job/rebalancer.hpp"
#include "actors/observe/metrics_hub.hpp"
#include "core/error.hpp"
#include "data/split.hpp"

namespace troupe::actors {
namespace {

bool time_is_up(job_self self) {
  const auto& max_s = self->state.launch.cfg.max_seconds;
  return max_s && seconds_since(self->state.clock.train_t0) >= *max_s;
}

bool should_stop(job_self self) {
  auto& st = self->state;
  if (st.step >= st.steps_total) return true;
  return st.sync->may_stop_on_time() && time_is_up(self);
}

// Sends the plan's slices to the workers. For the step in flight's successor the workers gather
// at once and park the slice until go_step.
void send_slices(job_self self, const msg::step_plan& plan,
                 const msg::local_ref<msg::index_list>& indices) {
  auto& st = self->state;
  std::int64_t offset = 0;
  // A plan made before an elastic job grew has no count for the new ranks: they get nothing.
  for (std::size_t r = 0; r < std::min(st.workers.size(), plan.counts.size()); ++r) {
    const auto count = plan.counts[r];
    if (count > 0) {
      auto cmd = tagged<msg::compute_cmd>(self);
      cmd.step = plan.step;
      cmd.version = plan.step;
      cmd.rank = static_cast<std::int32_t>(r);
      cmd.offset = offset;
      cmd.count = count;
      cmd.early = plan.step > st.step;
      self->send(st.workers[r].actor, cmd, indices);
    }
    offset += count;
  }
}

// The step's bookkeeping; `early`: its slices went out already, so only go_step is sent.
void begin_step(job_self self, msg::step_plan plan, const msg::local_ref<msg::index_list>& indices,
                bool early) {
  auto& st = self->state;
  st.plan = std::move(plan);
  st.plan.counts.resize(st.workers.size(), 0);  // ranks that joined after the plan was made
  st.step_stats = {};
  st.grads.assign(st.workers.size(), nullptr);
  st.clock.step_t0 = steady::now();
  st.trace.begin(st.clock.step_t0);
  st.stats.begin_step(st.workers.size());
  if (st.plan.data_epoch != st.pass) {
    st.pass = st.plan.data_epoch;
    st.pass_stats = {};
  }
  st.indices = indices;
  st.step_generation = st.gate.generation();
  st.mem.begin_step(st.step, st.plan.counts);
  arm_deadline(self);
  for (std::size_t r = 0; r < st.workers.size(); ++r) {
    if (st.plan.counts[r] <= 0 || !early) continue;
    auto go = tagged<msg::go_step>(self);
    go.step = st.step;
    self->send(st.workers[r].actor, go);
  }
  // Prefetch: the next plan (and its gather) is ready by the time this step is applied.
  if (st.step + 1 < st.steps_total) request_plan(self, st.step + 1);
}

// The step into the job's timeline, and the detections and recoveries the membership measured
// since the last step as events with their times.
void record_course(job_self self, const msg::step_metrics& sm) {
  auto& st = self->state;
  auto& tl = st.timeline;
  if (tl.series().workers.empty()) {
    std::vector<std::string> groups, workers;
    for (const auto& w : st.workers) {
      workers.push_back(w.name);
      if (std::find(groups.begin(), groups.end(), w.group) == groups.end())
        groups.push_back(w.group);
    }
    tl.set_names(std::move(groups), std::move(workers));
  }
  tl.step(to_live(sm));
  const auto& f = st.mem.report();
  char ms[32];
  for (; st.seen_detections < f.detect_ms.size(); ++st.seen_detections) {
    const double d = f.detect_ms[st.seen_detections];
    std::snprintf(ms, sizeof ms, "%.1f ms", d);
    note_event(self, "detected", std::string("an injected fault was detected in ") + ms, d);
  }
  for (; st.seen_recoveries < f.recovery_ms.size(); ++st.seen_recoveries) {
    const double d = f.recovery_ms[st.seen_recoveries];
    std::snprintf(ms, sizeof ms, "%.1f ms", d);
    note_event(self, "recovered", std::string("a step completed again ") + ms + " after a failure",
               d);
  }
}

// The step boundary: stop, let restarted workers join, or start the prefetched step.
void send_step_metrics(job_self self, double step_s, double reduce_s) {
  auto& st = self->state;
  auto sm = tagged<msg::step_metrics>(self);
  sm.name = st.launch.cfg.name;
  sm.step = st.step;
  sm.steps_total = st.steps_total;
  sm.data_epoch = st.plan.data_epoch;
  sm.epochs =
      std::max<std::int64_t>(1, (st.steps_total + st.steps_per_pass - 1) / st.steps_per_pass);
  sm.samples = static_cast<std::int64_t>(st.step_stats.samples);
  sm.loss = sm.samples > 0 ? st.step_stats.loss_sum / static_cast<double>(sm.samples) : 0.0;
  sm.step_seconds = step_s;
  sm.samples_per_second = static_cast<double>(st.samples_total) / st.clock.step_seconds_total;
  sm.elapsed_seconds = seconds_since(st.clock.job_t0);
  for (std::size_t r = 0; r < st.workers.size(); ++r) {
    const auto& g = st.workers[r].group;
    if (sm.groups.empty() || sm.groups.back() != g) {
      sm.groups.push_back(g);
      sm.group_samples.push_back(0);
    }
    sm.group_samples.back() += st.plan.counts[r];
  }
  sm.worker_compute_seconds = st.stats.step_compute();
  sm.worker_samples = st.stats.step_samples();
  sm.imbalance_index = st.stats.step_imbalance();
  sm.noise_scale = st.stats.noise_scale().value_or(0.0);
  sm.reduce_seconds = reduce_s;
  sm.sync_period = st.sync->sync_period();
  sm.share = st.share->load();
  sm.rebalances = st.stats.rebalances;
  for (const auto& w : st.workers) sm.wire_bytes += w.wire_bytes;
  record_course(self, sm);
  if (st.launch.metrics_hub) self->send(st.launch.metrics_hub, std::move(sm));
}

// The step is applied everywhere: the parameters are at version step + 1.
void complete_step(job_self self) {
  auto& st = self->state;
  const double step_s = seconds_since(st.clock.step_t0);
  const double reduce_s = seconds_since(st.clock.reduce_t0);
  st.clock.reduce_phase_seconds += reduce_s;
  reduce_completed(self, reduce_s);
  st.store->publish(st.step + 1);
  st.clock.step_seconds_total += step_s;
  st.samples_total += static_cast<std::int64_t>(st.step_stats.samples);
  st.pass_stats += st.step_stats;
  std::int64_t planned = 0;
  for (auto c : st.plan.counts) planned += c;
  if (st.ledger) {
    // The slices whose gradients this step applied, wherever they were computed.
    try {
      for (const auto& [offset, res] : st.mem.results()) {
        if (offset < 0 || offset + res.count > static_cast<std::int64_t>(st.indices->size()))
          throw runtime_failure("step " + std::to_string(st.step) + ": slice [" +
                                std::to_string(offset) + ", +" + std::to_string(res.count) +
                                ") past the plan's " + std::to_string(st.indices->size()) +
                                " samples");
        st.ledger->record(st.plan.data_epoch, st.indices->data() + offset,
                          static_cast<std::size_t>(res.count));
      }
      if ((st.step + 1) % st.steps_per_pass == 0) st.ledger->end_pass();
    } catch (const std::exception& e) {
      finish(self, job_status::failed, e.what());
      return;
    }
  }
  st.mem.step_completed(planned, static_cast<std::int64_t>(st.step_stats.samples),
                        seconds_since(st.clock.job_t0));
  st.grads.assign(st.grads.size(), nullptr);
  const double loss = st.step_stats.samples > 0
                          ? st.step_stats.loss_sum / static_cast<double>(st.step_stats.samples)
                          : 0.0;
  try {
    if (auto line = st.sync->commit(st.step, step_s - reduce_s, reduce_s, loss)) log(self, *line);
  } catch (const std::exception& e) {
    finish(self, job_status::failed, e.what());
    return;
  }
  leave_out_step(self, step_s);
  ++st.step;
  send_step_metrics(self, step_s, reduce_s);
  checkpoint_boundary(self);
  st.trace.boundary(steady::now());
  next_step(self);
}

// Every member reported: reduce, in offset order (rank order without failures; a re-planned
// slice sums where its samples are).
void reduce(job_self self) {
  auto& st = self->state;
  st.clock.reduce_t0 = steady::now();
  st.trace.all_done(st.clock.reduce_t0);
  st.clock.compute_phase_seconds +=
      std::chrono::duration<double>(st.clock.reduce_t0 - st.clock.step_t0).count();
  reduce_round round;
  round.cmd = tagged<msg::reduce_cmd>(self);
  round.cmd.step = st.step;
  round.cmd.total_samples = static_cast<std::int64_t>(st.step_stats.samples);
  auto set = std::make_shared<msg::grad_set>();
  std::int64_t previous = 0;
  for (const auto& [offset, res] : st.mem.results()) {
    round.cmd.ranks.push_back(res.rank);
    set->push_back(res.grad);
    // The slices tile the step's samples in offset order: each one's count is the distance to
    // the next (the last one's, to the step's total).
    if (!round.samples.empty()) round.samples.back() = offset - previous;
    round.samples.push_back(0);
    previous = offset;
  }
  if (!round.samples.empty()) round.samples.back() = round.cmd.total_samples - previous;
  st.reduce_generation = st.gate.generation();
  round.grads = msg::local_ref<msg::grad_set>{std::move(set)};
  std::vector<caf::actor> actors;
  for (const auto& w : st.workers) actors.push_back(w.actor);
  round.workers = &actors;
  round.last = st.step + 1 >= st.steps_total || time_is_up(self);
  st.pending_applied = st.sync->reduce(self, round);
  reduce_answers_begin(self);
  arm_reduce_deadline(self);
  // |G_B|^2: from the same sums (read-only) while the members reduce, or in parts with
  // `applied` (the last one closes the step's statistics).
  st.step_grad_sq = 0.0;
  if (!st.sync->grad_norm_from_applied()) st.stats.end_step(st.grads, round.cmd.total_samples);
  // A re-planned step's timings mix two plans over a changed membership: no decision on it.
  if (st.rebalancer && !st.stats.step_replanned()) {
    // The step's timings are complete now: deciding while the reduction runs gets the decision
    // to the distributor before the plan of step + 2 is requested.
    auto t = tagged<msg::step_metrics>(self);
    t.step = st.step + 1;
    t.worker_samples = st.stats.step_samples();
    t.worker_compute_seconds = st.stats.step_compute();
    self->send(st.rebalancer, std::move(t));
  }
}

}  // namespace

void start_rebalancer(job_self self) {
  auto& st = self->state;
  if (st.rebalancer) {
    self->demonitor(st.rebalancer);
    self->send_exit(st.rebalancer, caf::exit_reason::user_shutdown);
  }
  st.rebalancer = self->spawn(rebalancer_actor, caf::actor_cast<caf::actor>(self), st.gate.job(),
                              st.gate.generation(), st.workers.size(), st.launch.cfg.batch,
                              rebalancer_options{});
  self->monitor(st.rebalancer);
}

bool held_below_min_devices(job_self self) {
  auto& st = self->state;
  const auto& elastic = st.launch.cfg.elastic;
  if (!elastic) return false;
  int members = 0;
  // A member the leave-out trial set aside is healthy and present: it counts.
  for (std::size_t r = 0; r < st.workers.size(); ++r)
    members += st.mem.is_member(r) || st.mem.status(r) == member_status::set_aside ? 1 : 0;
  const std::string count = std::to_string(members) + " of min_devices " +
                            std::to_string(elastic->min_devices) + " members";
  if (members >= elastic->min_devices) {
    if (st.paused) log(self, "resumed at step " + std::to_string(st.step) + ": " + count);
    st.paused = false;
    return false;
  }
  if (!st.paused)
    log(self, "paused at step " + std::to_string(st.step) + ": " + count +
                  "; waiting for devices to come back");
  st.paused = true;
  return true;
}

void next_step(job_self self) {
  auto& st = self->state;
  if (st.phase == job_phase::draining) {
    if (!st.interrupting) {
      finish(self, job_status::cancelled);
      return;
    }
    // The run stops: the checkpoint of this boundary (checkpoint_boundary took it) lands first.
    const auto stop = [self] {
      log(self, "interrupted at step " + std::to_string(self->state.step));
      finish(self, job_status::interrupted);
    };
    if (!checkpoint_hold(self, stop)) stop();
    return;
  }
  if (should_stop(self)) {
    // The last step's checkpoint, if one is being written, lands before the evaluation (4').
    if (!checkpoint_hold(self, [self] { evaluate(self); })) evaluate(self);
    return;
  }
  // The leave-out trial sets members aside here, or brings them back to join below.
  if (leave_out_at_boundary(self)) return;
  // A draining agent's group leaves here; the plan of this step is then asked again without it.
  if (groups_leave_at_boundary(self)) return;
  // Restarted workers enter here; the plan of this step is then asked again with them.
  if (join_at_boundary(self)) return;
  if (held_below_min_devices(self)) return;
  if (st.next_plan && st.next_plan->first.step == st.step) {
    auto p = std::move(*st.next_plan);
    st.next_plan.reset();
    begin_step(self, std::move(p.first), p.second, true);
  }
  // Otherwise the plan is on its way: on_step_plan dispatches it.
}

void request_plan(job_self self, std::int64_t step) {
  auto req = tagged<msg::plan_request>(self);
  req.step = step;
  self->send(self->state.distributor, req);
}

bool step_live(job_self self) {
  return self->state.mem.pending() > 0 || self->state.pending_applied > 0;
}

void start_running(job_self self) {
  auto& st = self->state;
  enter(self, job_phase::running);
  std::string text = std::string("split (") + name_of(st.launch.cfg.data.split) + ") shares:";
  double sum = 0.0;
  for (double w : st.weights) sum += w;
  for (std::size_t r = 0; r < st.workers.size(); ++r) {
    char buf[96];
    std::snprintf(buf, sizeof buf, " %s=%.3f", st.workers[r].name.c_str(), st.weights[r] / sum);
    text += buf;
  }
  log(self, text);
  membership_start(self);
  auto upd = tagged<msg::split_update>(self);
  upd.weights = st.weights;
  self->send(st.distributor, upd);
  if (st.launch.cfg.data.split == split_kind::adaptive) start_rebalancer(self);
  st.sync->open_generation(self, st.gate.job(), st.gate.generation(), generation_of(self), true);
  // Workers lost while the job started: now the membership decides (restart, migrate).
  const bool lost_at_start = !st.start_downs.empty();
  if (auto why = replay_start_failures(self)) {
    finish(self, job_status::failed, *why);
    return;
  }
  leave_out_start(self);
  take_waiting_groups(self);
  st.clock.train_t0 = steady::now();
  // A resumed job starts at its checkpoint's step (which may already be the last).
  if (should_stop(self)) {
    evaluate(self);
    return;
  }
  // A failure replayed above opened a generation, which asked for the plan already.
  if (!lost_at_start) request_plan(self, st.step);
}

void on_step_plan(job_self self, msg::step_plan& plan, msg::local_ref<msg::index_list>& indices) {
  auto& st = self->state;
  if (!st.gate.admit(plan)) return;
  ++st.progress;
  // Every rank is out at once (failed or restarting). The distributor still splits over the
  // last members, so this plan would go to workers that are gone, and the step would wait for
  // them with no deadline (only members are timed). It is dropped: the first rank back opens a
  // generation, which asks for the plan of the step again (change_membership).
  if (!any_member(self)) return;
  // The current step's plan goes out now; its successor's slices go out early (the workers
  // gather and park them) and start with go_step once this step is applied.
  if (plan.step == st.step && !step_live(self)) {
    // Paused: the plan is asked again when a member joins (a new generation).
    if (held_below_min_devices(self)) return;
    send_slices(self, plan, indices);
    begin_step(self, std::move(plan), indices, false);
  } else if (plan.step == st.step + 1) {
    send_slices(self, plan, indices);
    st.next_plan.emplace(std::move(plan), indices);
  }
}

void on_step_done(job_self self, const msg::step_done& m, msg::local_ref<msg::grad_buffer>& grad) {
  auto& st = self->state;
  if (!accept_result(self, m, grad.ptr)) return;
  ++st.progress;
  const auto r = static_cast<std::size_t>(m.rank);
  // A re-planned second slice of the same step: the job still holds the first one's buffer.
  const bool second = st.grads[r] && st.grads[r] != grad.ptr;
  if (!st.grads[r]) st.grads[r] = grad.ptr;
  if (second)
    st.trace.void_step();
  else
    st.trace.worker_done(m.compute_start_ns, m.compute_end_ns);
  auto& w = st.workers[r];
  w.samples += m.samples;
  if (!second) w.steps += 1;
  if (w.first_step < 0) w.first_step = m.step;
  w.compute_seconds += m.compute_seconds;
  w.wire_bytes += m.wire_bytes;
  st.stats.on_worker(r, m.samples, m.grad_sq_norm, m.compute_seconds);
  st.step_stats.loss_sum += m.loss_sum;
  st.step_stats.samples += static_cast<std::size_t>(m.samples);
  st.step_stats.correct += static_cast<std::size_t>(m.correct);
  if (st.mem.pending() == 0) reduce(self);
}

void on_applied(job_self self, const msg::applied& m) {
  auto& st = self->state;
  if (!st.gate.admit_since(m, st.reduce_generation)) return;
  if (m.step != st.step || st.pending_applied <= 0) return;
  ++st.progress;
  st.step_grad_sq += m.grad_sq;
  st.trace.applied(m.sum_seconds, m.apply_seconds);
  if (reduce_answer_while_recovering(self, m.shard, reduce_answer::applied)) return;
  if (--st.pending_applied > 0) return;
  step_applied(self);
}

void on_reduce_dropped(job_self self, const msg::reduce_dropped& m) {
  auto& st = self->state;
  if (!st.gate.admit_since(m, st.reduce_generation)) return;
  if (m.step != st.step || st.pending_applied <= 0) return;
  ++st.progress;
  if (reduce_answer_while_recovering(self, m.rank, reduce_answer::dropped)) return;
  // A member dropped the reduction with no member lost: the others may wait in it for that
  // member's part. The job aborts it with a new generation and recovers as for a loss.
  reduce_recovery_on_drop(self, m.rank);
}

void step_applied(job_self self) {
  auto& st = self->state;
  st.trace.all_applied(steady::now());
  if (st.stats.step_replanned()) st.trace.void_step();
  if (st.sync->grad_norm_from_applied()) st.stats.end_step(st.step_grad_sq);
  // A checkpoint still being written holds this step back (actors/checkpoint/checkpoint_cycle.hpp).
  if (checkpoint_hold(self, [self] { complete_step(self); })) return;
  complete_step(self);
}

// A rebalancer decision (split: adaptive): log, count, and hand it to the distributor, whose
// next plan uses it.
void on_split_decision(job_self self, const msg::split_decision& d) {
  auto& st = self->state;
  if (!st.gate.admit(d) || d.slices.size() != st.workers.size()) return;
  ++st.progress;
  ++st.stats.rebalances;
  // A rank out of the membership keeps its last weight for when it rejoins.
  for (std::size_t r = 0; r < st.workers.size(); ++r)
    if (st.mem.is_member(r)) st.weights[r] = static_cast<double>(d.slices[r]);
  std::string text = "rebalance " + std::to_string(st.stats.rebalances) + " after step " +
                     std::to_string(d.step) + ":";
  for (std::size_t r = 0; r < st.workers.size(); ++r)
    text += " " + st.workers[r].name + "=" + std::to_string(d.slices[r]);
  note_event(self, "rebalance", text + " (" + d.reason + ")");
  auto fwd = tagged<msg::split_update>(self);
  fwd.weights = st.mem.member_weights(st.weights);
  self->send(st.distributor, fwd);
}

}  // namespace troupe::actors
