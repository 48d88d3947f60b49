#include "actors/job/job.hpp"

#include <algorithm>
#include <cstdio>

#include <caf/exit_reason.hpp>
#include <caf/message_handler.hpp>
#include <caf/system_messages.hpp>

#include "actors/checkpoint/checkpoint_cycle.hpp"
#include "actors/common/specs.hpp"
#include "actors/job/data_distributor.hpp"
#include "actors/job/job_checkpoint.hpp"
#include "actors/job/job_evaluation.hpp"
#include "actors/job/job_growth.hpp"
#include "actors/job/job_membership.hpp"
#include "actors/job/job_messages.hpp"
#include "actors/job/job_report.hpp"
#include "actors/job/job_start.hpp"
#include "actors/job/job_state.hpp"
#include "actors/job/job_steps.hpp"
#include "core/job_rules.hpp"

namespace troupe::actors {
namespace {

// A cancel names the generation it was meant for; a stop of the run (interrupt) and a cancel by
// the task manager (any_generation) do not follow the job's generations and apply to any.
bool admit_drain(job_self self, const msg::drain& m) {
  return m.interrupt || m.generation == msg::any_generation ? m.job == self->state.gate.job()
                                                            : self->state.gate.admit(m);
}

// The time the job spent in steps, all of them together, and how it divides.
void log_step_time(job_self self) {
  const auto& st = self->state;
  const auto& c = st.clock;
  const auto steps = st.step - st.ckpt.resumed_from.value_or(0);
  char buf[240];
  std::snprintf(buf, sizeof buf,
                "time in steps %.3f s over %lld steps (%.3f ms a step): compute phase %.3f s, "
                "reduce+apply %.3f s, other %.3f s",
                c.step_seconds_total, static_cast<long long>(steps),
                steps > 0 ? 1e3 * c.step_seconds_total / static_cast<double>(steps) : 0.0,
                c.compute_phase_seconds, c.reduce_phase_seconds,
                c.step_seconds_total - c.compute_phase_seconds - c.reduce_phase_seconds);
  log(self, buf);
  const auto phases = st.trace.medians();
  if (phases.steps > 0)
    log(self, "phases of a step, median us over " + std::to_string(phases.steps) +
                  " steps: " + phase_line(phases));
}

// A message no phase expects is dropped: a late answer of an earlier phase (a step deadline
// that fires after the last step, a probe after the split was chosen). CAF's own caf::drop
// answers the sender with an error; for the job's own timers the sender is the job, and an
// unhandled error ends an event-based actor.
caf::result<caf::message> drop_quietly(caf::scheduled_actor*, caf::message_view&) {
  return caf::message{};
}

// What every phase answers.
caf::message_handler common(job_self self) {
  return {
      // Elastic: a group whose agent joined (job_growth.hpp).
      [=](msg::group_up_atom, const msg::local_ref<group_slot>& slot) {
        if (slot) on_group_joined(self, *slot);
      },
      // An agent drains or stops: its group leaves at a step boundary (job_growth.hpp).
      [=](msg::group_leave_atom, const std::string& group) -> caf::result<bool> {
        return on_group_leave(self, group);
      },
      // Edge 8: the watchdog.
      [=](msg::wait_atom) {
        auto& st = self->state;
        if (st.progress == st.watched_progress) {
          finish(self, job_status::failed,
                 "no progress for " + std::to_string(st.launch.step_deadline_seconds) +
                     " s (step " + std::to_string(st.step) + ")");
          return;
        }
        st.watched_progress = st.progress;
        self->delayed_send(self, to_timespan(st.launch.step_deadline_seconds), msg::wait_atom_v);
      },
      // A share decision from the task manager (cluster-wide, so any generation): to every
      // worker, and into the cell that a restarted worker starts from.
      [=](const msg::share_update& u) {
        self->state.share->store(u.share);
        auto fwd = u;
        fwd.generation = self->state.gate.generation();
        for (const auto& w : self->state.workers)
          if (w.actor) self->send(w.actor, fwd);
      },
      // Edge 6 before RUNNING: nothing is in flight, so the job ends now.
      [=](const msg::drain& m) {
        if (admit_drain(self, m))
          finish(self, m.interrupt ? job_status::interrupted : job_status::cancelled);
      },
      // Edge 7: outside RUNNING and DRAINING a worker failure fails the job, but while it starts
      // (spawning, probing) where the worker's supervision policy keeps the job going.
      [=](const msg::worker_down& m) {
        ++self->state.progress;
        if (on_start_failure(self, m)) return;
        if (auto why = unhandled_failure(self, m))
          finish(self, job_status::failed, *why, m.bad_input);
      },
      [=](msg::query_atom) {
        return caf::make_message(self->state.gate.dropped(), self->state.step);
      },
      [=](msg::inject_atom, const std::string& spec) { return inject_fault(self, spec); },
  };
}

// RUNNING and DRAINING: the step protocol, failures, rebalancing and checkpoints.
caf::message_handler stepping(job_self self) {
  return {
      [=](msg::step_plan& p, msg::local_ref<msg::index_list>& i) { on_step_plan(self, p, i); },
      [=](const msg::step_done& m, msg::local_ref<msg::grad_buffer>& g) {
        on_step_done(self, m, g);
      },
      [=](const msg::applied& m) { on_applied(self, m); },
      [=](const msg::reduce_dropped& m) { on_reduce_dropped(self, m); },
      [=](const msg::split_decision& d) { on_split_decision(self, d); },
      [=](const msg::ckpt_part& m, const msg::local_ref<ckpt_shard_part>& part) {
        checkpoint_part(self, m, part);
      },
      [=](const msg::ckpt_written& m) { checkpoint_written(self, m); },
      [=](const msg::worker_ready& m) {
        on_restarted_ready(self, m, caf::actor_cast<caf::actor>(self->current_sender()));
      },
      [=](const msg::worker_down& m) {
        ++self->state.progress;
        if (auto why = on_worker_down(self, m)) finish(self, job_status::failed, *why, m.bad_input);
      },
      [=](const msg::step_timeout& t) { on_step_timeout(self, t); },
  };
}

caf::behavior behavior_of(job_self self, job_phase phase) {
  switch (phase) {
    case job_phase::spawning:
      return common(self).or_else([=](const msg::worker_ready& m) { on_worker_ready(self, m); });
    case job_phase::probing:
      return common(self).or_else(
          [=](const msg::probe_done& m) { on_probe_done(self, m); },
          // A worker lost while the job starts, restarted: it joins once the job runs.
          [=](const msg::worker_ready& m) { on_worker_ready(self, m); });
    case job_phase::running:
      // Edge 6: finish the step in flight first.
      return stepping(self)
          .or_else([=](const msg::drain& m) {
            if (!admit_drain(self, m)) return;
            self->state.interrupting = m.interrupt;
            enter(self, job_phase::draining);
          })
          .or_else(common(self));
    case job_phase::draining:
      return stepping(self)
          .or_else([=](const msg::drain& m) {
            // A cancel that becomes a stop of the run: the last checkpoint is taken too.
            if (admit_drain(self, m) && m.interrupt) self->state.interrupting = true;
          })
          .or_else(common(self));
    case job_phase::evaluating:
      return caf::message_handler{[=](const msg::eval_done& m) { on_eval_done(self, m); },
                                  [=](const msg::worker_down& m) {
                                    if (auto why = on_eval_worker_down(self, m))
                                      finish(self, job_status::failed, *why, m.bad_input);
                                  }}
          .or_else(common(self));
    case job_phase::loading:
    case job_phase::done:
      break;
  }
  return common(self);
}

}  // namespace

void enter(job_self self, job_phase phase) {
  self->state.phase = phase;
  if (phase != job_phase::done) self->become(behavior_of(self, phase));
}

void finish(job_self self, job_status status, const std::string& error, bool bad_input) {
  auto& st = self->state;
  if (st.phase == job_phase::done) return;
  if (st.sync) {
    if (const auto why = st.sync->end(self, status); !why.empty()) {
      finish(self, job_status::failed, why);
      return;
    }
  }
  // The last step closes at its boundary: the log line and the report read the same medians.
  st.trace.finish();
  if (st.step > 0) log_step_time(self);
  st.phase = job_phase::done;
  auto data = std::make_shared<job_report_data>();
  data->report = make_report(self, status);
  data->report.error = error;
  data->report.bad_input = bad_input;
  auto rel = tagged<msg::release>(self);
  for (const auto& slot : st.launch.slots) self->send(slot.supervisor, rel);
  answer_group_leaves(self);
  auto fin = tagged<msg::job_finished>(self);
  fin.name = st.launch.cfg.name;
  fin.status = status;
  fin.error = error;
  fin.bad_input = bad_input;
  if (st.launch.metrics_hub) self->send(st.launch.metrics_hub, fin);
  if (st.launch.task_manager)
    self->send(st.launch.task_manager, fin, msg::local_ref<job_report_data>{data});
  if (st.distributor) self->send_exit(st.distributor, caf::exit_reason::user_shutdown);
  if (st.rebalancer) self->send_exit(st.rebalancer, caf::exit_reason::user_shutdown);
  if (st.ckpt.writer) self->send_exit(st.ckpt.writer, caf::exit_reason::user_shutdown);
  self->quit();
}

void fail(job_self self, const caf::error& e, const std::string& where) {
  finish(self, job_status::failed, where + ": " + failure_text(self->system(), e),
         is_input_failure(e));
}

caf::behavior job_actor(stateful<job_state>* self, job_launch launch) {
  auto& st = self->state;
  st.gate = generation_gate{launch.id, 1};
  st.launch = std::move(launch);
  st.share->store(st.launch.cfg.share);
  st.clock.job_t0 = steady::now();
  keep_exception_text(self);
  self->set_default_handler(drop_quietly);
  // The sync mode's actors and the distributor are ours: one dying is the job failing (edge 7).
  self->set_down_handler([=](const caf::down_msg& d) {
    finish(self, job_status::failed,
           "a job actor stopped: " + failure_text(self->system(), d.reason));
  });
  st.replicas_here =
      std::none_of(st.launch.slots.begin(), st.launch.slots.end(),
                   [&](const group_slot& s) { return replica_in_agent(st.launch.cfg, s.group); });
  st.reduction_block = config::reduction_block(st.launch.cfg, !st.replicas_here);
  st.distributor = spawn_detached(self, data_distributor, st.gate.job(), st.gate.generation(),
                                  st.launch.cfg, st.reduction_block);
  self->monitor(st.distributor);
  self->request(st.distributor, to_timespan(st.launch.step_deadline_seconds), msg::data_atom_v)
      .then([=](msg::local_ref<data_bundle>& b) { on_data(self, *b); },
            [=](caf::error& e) { fail(self, e, "loading data"); });
  self->delayed_send(self, to_timespan(st.launch.step_deadline_seconds), msg::wait_atom_v);
  return behavior_of(self, job_phase::loading);
}

}  // namespace troupe::actors
