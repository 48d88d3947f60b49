#include "actors/tasks/task_manager.hpp"

#include "actors/job/job_state.hpp"

#include <algorithm>
#include <exception>
#include <set>

#include <caf/exit_reason.hpp>
#include <caf/system_messages.hpp>

#include "actors/tasks/share_allocator.hpp"
#include "actors/tasks/task_queue.hpp"
#include "actors/workers/group_supervisor.hpp"
#include "core/error.hpp"
#include "policies/scheduling.hpp"

namespace troupe::actors {
namespace {

using self_ptr = stateful<tm_state>*;

void event(self_ptr self, const std::string& job, const std::string& what,
           std::vector<std::string> groups = {}) {
  auto& st = self->state;
  st.events.push_back({seconds_since(st.opts.run_t0), job, what, std::move(groups)});
  if (st.opts.metrics_hub) {
    msg::log_line l;
    l.name = job;
    l.text = what;
    for (const auto& g : st.events.back().groups)
      l.text += (g == st.events.back().groups.front() ? " on " : ", ") + g;
    self->send(st.opts.metrics_hub, l);
  }
}

// Every end of a job passes here: the report is kept and, after the job's last event, handed to
// the metrics hub for runtime::on_job_end (which also closes the job's log file).
// `keep_outcome`: a second job of a taken name fails without touching the first one's outcome.
void record_end(self_ptr self, job_report r, bool keep_outcome = false) {
  auto& st = self->state;
  if (!keep_outcome) st.outcomes[r.name] = r.status;
  st.waiting.erase(r.name);
  st.reports.push_back(r);
  event(self, r.name, name_of(r.status));
  if (!st.opts.metrics_hub || keep_outcome) return;
  auto data = std::make_shared<job_report_data>();
  data->report = std::move(r);
  self->send(st.opts.metrics_hub, msg::job_end_atom_v, msg::local_ref<job_report_data>{data});
}

// A job that ends without ever running (cancelled, bad demand) still gets a report.
void end_unstarted(self_ptr self, const queued_entry& q, job_status status,
                   const std::string& error, bool bad_input, bool keep_outcome = false) {
  auto& st = self->state;
  job_report r;
  r.name = q.cfg.name;
  r.status = status;
  r.error = error;
  r.bad_input = bad_input;
  r.global_batch = q.cfg.batch;
  r.started_s = r.finished_s = seconds_since(st.opts.run_t0);
  record_end(self, std::move(r), keep_outcome);
}

void deliver_if_idle(self_ptr self) {
  auto& st = self->state;
  if (!st.queue.empty() || !st.running.empty() || st.waiters.empty()) return;
  auto data = std::make_shared<run_report_data>();
  data->report.jobs = st.reports;
  for (const auto& g : st.groups) {
    data->report.cluster.groups.push_back({g.cfg.name, name_of(g.cfg.device), g.cfg.count,
                                           g.cfg.threads, g.cfg.weight.value_or(0.0),
                                           g.cfg.slowdown, g.cfg.row_seconds.value_or(0.0)});
    data->report.cluster.devices += g.cfg.count;
  }
  data->report.cluster.wall_seconds = seconds_since(st.opts.run_t0);
  data->report.cluster.schedule = st.events;
  for (auto& rp : st.waiters) rp.deliver(msg::local_ref<run_report_data>{data});
  st.waiters.clear();
}

// Jobs whose dependency failed or was cancelled can never run (edge 3); transitively.
// Ends, unstarted, every queued job that `why` gives a reason for ("" keeps it queued). True
// when any ended.
template <class Why>
bool end_queued_if(self_ptr self, job_status status, bool bad_input, Why why) {
  auto& st = self->state;
  bool any = false;
  for (auto it = st.queue.begin(); it != st.queue.end();) {
    const std::string reason = why(*it);
    if (reason.empty()) {
      ++it;
      continue;
    }
    const auto q = *it;
    it = st.queue.erase(it);
    end_unstarted(self, q, status, reason, bad_input);
    any = true;
  }
  return any;
}

bool cancel_orphans(self_ptr self) {
  const auto& outcomes = self->state.outcomes;
  return end_queued_if(self, job_status::cancelled, false, [&](const queued_entry& q) {
    for (const auto& dep : q.cfg.after) {
      const auto o = outcomes.find(dep);
      if (o != outcomes.end() &&
          (o->second == job_status::failed || o->second == job_status::cancelled ||
           o->second == job_status::interrupted))
        return "job '" + dep + "' it depends on did not complete";
    }
    return std::string();
  });
}

// Priority as a share multiplier: 1 + p above zero, 1 / (1 - p) below (monotone, and p = 0 is 1).
double priority_weight(int p) {
  return p >= 0 ? 1.0 + p : 1.0 / (1.0 - p);
}

// A job starts on a shared device. Fixed: the gates take the `share` keys as relative weights;
// for the report, each running sharer's share is recomputed as its key over the keys of the jobs
// sharing at that moment (so a job's report shows the share it had when the last one joined).
// Adaptive: the allocator takes it from here.
void join_shares(self_ptr self, msg::job_id id, const config::job_config& cfg) {
  auto& st = self->state;
  if (st.share_allocator) {
    msg::share_member m;
    m.job = id;
    m.name = cfg.name;
    m.weight = cfg.share * priority_weight(cfg.priority);
    m.batch = cfg.batch;
    self->send(st.share_allocator, m);
    return;
  }
  st.share_keys[id] = cfg.share;
  double total = cfg.share;
  for (const auto& [rid, run] : st.running)
    if (run.sharing) total += st.share_keys[rid];
  st.shares[cfg.name] = cfg.share / total;
  for (const auto& [rid, run] : st.running)
    if (run.sharing) st.shares[run.name] = st.share_keys[rid] / total;
}

// Spawns the job of `launch` (edge 1's end) and monitors it.
void start_job(self_ptr self, msg::job_id id, running_entry& run, const job_launch& launch) {
  auto& st = self->state;
  run.actor = st.opts.spawner ? st.opts.spawner(self, launch) : self->spawn(job_actor, launch);
  self->monitor(run.actor);
  if (run.sharing) join_shares(self, id, launch.cfg);
}

void schedule(self_ptr self) {
  auto& st = self->state;
  if (st.interrupted) {
    end_queued_if(self, job_status::interrupted, false,
                  [](const queued_entry&) { return std::string("interrupted before it started"); });
    deliver_if_idle(self);
    return;
  }
  while (cancel_orphans(self)) {
  }
  std::vector<policies::job_request> pending;
  std::set<std::string> completed, running;
  for (const auto& [name, outcome] : st.outcomes) {
    if (outcome == job_status::completed) completed.insert(name);
    if (outcome == job_status::running) running.insert(name);
  }
  const auto groups = group_states(st);
  // Jobs that name a group that does not exist can never run (edge 4).
  end_queued_if(self, job_status::failed, true, [&](const queued_entry& q) {
    for (const auto& r : q.cfg.resources)
      if (std::none_of(st.groups.begin(), st.groups.end(),
                       [&](const managed_group& g) { return g.cfg.name == r; }))
        return "job '" + q.cfg.name + "': resources: no group named '" + r + "'";
    return std::string();
  });
  // A job whose dependencies were not all submitted yet is left out of this pass: it waits.
  for (const auto& q : st.queue) {
    bool known = true;
    for (const auto& dep : q.cfg.after) known = known && st.outcomes.count(dep) > 0;
    if (!known) continue;
    pending.push_back(request_of(st, q));
  }
  policies::admission_result adm;
  try {
    // Backfill: a job whose groups are free starts even while an earlier (or higher-priority)
    // job waits for other groups; admission order still follows priority, so a waiting job gets
    // its groups before any lower-priority job when they are released.
    policies::admission_options ao;
    ao.backfill = true;
    adm = policies::admit(pending, groups, completed, running, ao);
  } catch (const input_error& e) {
    // A dependency cycle or an unknown placement among the queued jobs (the config loader
    // rejects both in files; embedding apps can still submit them): fail what cannot run.
    const std::string what = e.what();
    auto bad = st.queue;
    st.queue.clear();
    for (const auto& b : bad) end_unstarted(self, b, job_status::failed, what, true);
    deliver_if_idle(self);
    return;
  }
  auto take_queued = [&](const std::string& name) {
    auto it = std::find_if(st.queue.begin(), st.queue.end(),
                           [&](const queued_entry& e) { return e.cfg.name == name; });
    auto q = *it;
    st.queue.erase(it);
    return q;
  };
  for (const auto& name : adm.infeasible) {
    auto q = take_queued(name);
    end_unstarted(self, q, job_status::failed, "its demand exceeds the devices of its groups",
                  true);
  }
  for (const auto& dec : adm.start) {  // edge 1
    auto q = take_queued(dec.job);
    job_launch launch;
    launch.id = q.id;
    launch.cfg = q.cfg;
    launch.task_manager = caf::actor_cast<caf::actor>(self);
    launch.metrics_hub = st.opts.metrics_hub;
    launch.run_t0 = st.opts.run_t0;
    launch.step_deadline_seconds = st.opts.step_deadline_seconds;
    launch.resume_dir = q.resume_dir.empty() ? st.opts.resume_dir : q.resume_dir;
    running_entry run;
    run.name = q.cfg.name;
    run.entry = q;
    std::vector<std::string> names;
    int present = 0;
    for (const auto& entry : dec.where) {
      if (entry.devices <= 0) continue;
      for (auto& g : st.groups) {
        if (g.cfg.name != entry.group) continue;
        group_slot slot{g.cfg, g.supervisor, {}};
        for (std::size_t d = 0;
             d < g.busy.size() && static_cast<int>(slot.devices.size()) < entry.devices; ++d)
          if (g.cfg.shared || !g.busy[d]) {
            g.busy[d] = !g.cfg.shared;
            slot.devices.push_back(static_cast<int>(d));
          }
        run.sharing = run.sharing || g.cfg.shared;
        run.held.emplace_back(entry.group, slot.devices);
        if (q.cfg.elastic && !group_present(self->state, g.cfg)) {
          run.pending.push_back(std::move(slot));
          continue;
        }
        present += static_cast<int>(slot.devices.size());
        launch.slots.push_back(std::move(slot));
        names.push_back(entry.group);
      }
    }
    st.outcomes[q.cfg.name] = job_status::running;
    if (q.cfg.elastic && present < q.cfg.elastic->min_devices) {
      event(self, q.cfg.name,
            "waiting for devices (" + std::to_string(present) + " present, min_devices " +
                std::to_string(q.cfg.elastic->min_devices) + ")",
            names);
      run.deferred = std::move(launch);
      st.running.emplace(q.id, std::move(run));
      continue;
    }
    event(self, q.cfg.name, "started", names);
    start_job(self, q.id, run, launch);
    st.running.emplace(q.id, std::move(run));
  }
  if (st.sealed && st.running.empty() && !st.queue.empty()) {
    // Nothing runs and nothing could start: these jobs never will (edge 3).
    auto stuck = st.queue;
    st.queue.clear();
    for (const auto& q : stuck)
      end_unstarted(self, q, job_status::cancelled,
                    "can never start (a dependency was never submitted)", false);
  }
  // Edge 7: pause the preemptible jobs that make room for a waiting one of higher priority.
  for (const auto& p : preemptions(st, adm.waiting_resources)) {
    auto& run = st.running.at(p.victim);
    run.preempted_by = p.waiting;
    event(self, run.name, "pausing at its next step boundary for '" + p.waiting + "'");
    self->send(run.actor, msg::drain{p.victim, 0, true});
  }
  note_waiting(st, adm);
  deliver_if_idle(self);
}

// An agent joined for `group`: the elastic jobs holding it as pending take it in (a deferred
// one starts once it has min_devices).
void on_group_up(self_ptr self, const std::string& group) {
  auto& st = self->state;
  // Jobs held for this group's agent may start now.
  if (st.opts.hold_for_agents) schedule(self);
  for (auto& [id, run] : st.running) {
    const auto it = std::find_if(run.pending.begin(), run.pending.end(),
                                 [&](const group_slot& s) { return s.group.name == group; });
    if (it == run.pending.end()) continue;
    auto slot = std::move(*it);
    run.pending.erase(it);
    if (!run.deferred) {
      self->send(run.actor, msg::group_up_atom_v,
                 msg::local_ref<group_slot>{std::make_shared<group_slot>(std::move(slot))});
      continue;
    }
    run.deferred->slots.push_back(std::move(slot));
    int present = 0;
    std::vector<std::string> names;
    for (const auto& s : run.deferred->slots) {
      present += static_cast<int>(s.devices.size());
      names.push_back(s.group.name);
    }
    if (present < run.deferred->cfg.elastic->min_devices) continue;
    event(self, run.name, "started", names);
    const auto launch = std::move(*run.deferred);
    run.deferred.reset();
    start_job(self, id, run, launch);
  }
}

// The groups stop the job's workers (and forget its failures and pending restarts).
void release_workers(self_ptr self, msg::job_id id) {
  for (const auto& g : self->state.groups) self->send(g.supervisor, msg::release{id, 1});
}

void release(self_ptr self, msg::job_id id) {
  auto& st = self->state;
  auto it = st.running.find(id);
  if (it == st.running.end()) return;
  if (it->second.sharing && st.share_allocator) {
    msg::share_member m;
    m.job = id;
    m.name = it->second.name;
    m.active = false;
    self->send(st.share_allocator, m);
  }
  for (const auto& [gname, devs] : it->second.held)
    for (auto& g : st.groups)
      if (g.cfg.name == gname)
        for (int d : devs) g.busy[static_cast<std::size_t>(d)] = false;
  self->demonitor(it->second.actor);
  st.running.erase(it);
}

}  // namespace

caf::behavior task_manager(stateful<tm_state>* self, task_manager_options opts) {
  auto& st = self->state;
  st.opts = std::move(opts);
  const bool any_shared = std::any_of(st.opts.cluster.groups.begin(), st.opts.cluster.groups.end(),
                                      [](const config::group_config& g) { return g.shared; });
  if (any_shared && st.opts.cluster.shares == share_mode::adaptive) {
    share_allocator_options so;
    so.period_seconds = st.opts.cluster.share_period;
    so.policy.floor = st.opts.cluster.share_floor;
    st.share_allocator = self->spawn<caf::linked>(
        share_allocator, caf::actor_cast<caf::actor>(self), st.opts.metrics_hub, so);
  }
  for (const auto& g : st.opts.cluster.groups) {
    managed_group mg;
    mg.cfg = g;
    mg.supervisor = g.process != group_process::local && st.opts.agents
                        ? self->spawn(remote_group_supervisor, g, st.opts.agents)
                        : self->spawn(group_supervisor, g);
    mg.busy.assign(static_cast<std::size_t>(std::max(0, g.count)), false);
    st.groups.push_back(std::move(mg));
  }
  // The runtime is going away (its destructor sends this) while a job still runs, e.g. one that
  // outlived the caller's wait: the job holds its workers and they hold it, so nothing would
  // ever stop them and the actor system's shutdown would wait forever. The groups let go of the
  // job's workers, and the job is killed. A linked actor's normal exit is not the runtime's.
  self->set_exit_handler([=](const caf::exit_msg& m) {
    if (!m.reason) return;
    auto& st = self->state;
    for (auto& [id, run] : st.running) {
      release_workers(self, id);
      self->send_exit(run.actor, caf::exit_reason::kill);
    }
    self->quit(m.reason);
  });
  // Edge 5.
  self->set_down_handler([=](const caf::down_msg& d) {
    auto& st = self->state;
    for (auto& [id, run] : st.running) {
      if (run.actor.address() != d.source) continue;
      job_report r;
      r.name = run.name;
      r.status = job_status::failed;
      r.error = "job actor stopped: " + failure_text(self->system(), d.reason);
      r.finished_s = seconds_since(st.opts.run_t0);
      record_end(self, std::move(r));
      release_workers(self, id);
      release(self, id);
      schedule(self);
      return;
    }
  });
  return {
      [=](msg::submit_atom, const msg::local_ref<job_request>& req) {
        auto& st = self->state;
        queued_entry q{st.next_id++, st.next_seq++, req->config, {}};
        // A name is one job at a time; once it ended, the name may run again (a service retries
        // a job whose start failed).
        const auto earlier = st.outcomes.find(q.cfg.name);
        if (earlier != st.outcomes.end() &&
            (earlier->second == job_status::queued || earlier->second == job_status::running)) {
          end_unstarted(self, q, job_status::failed,
                        "a job named '" + q.cfg.name + "' is already queued or running", true,
                        true);
          return;
        }
        st.outcomes[q.cfg.name] = job_status::queued;
        event(self, q.cfg.name, "queued");
        st.queue.push_back(std::move(q));
        schedule(self);
      },
      // Edge 2.
      [=](const msg::job_finished& f, const msg::local_ref<job_report_data>& rep) {
        auto& st = self->state;
        if (!st.running.count(f.job)) return;
        const auto& run = st.running.at(f.job);
        // Edge 7's end: paused at a checkpoint, it waits again in its old place.
        if (!run.preempted_by.empty() && f.status == job_status::interrupted && !st.interrupted) {
          auto q = run.entry;
          q.id = st.next_id++;
          q.resume_dir = q.cfg.checkpoint.dir;
          event(self, f.name,
                "paused at step " + std::to_string(rep->report.steps) + " for '" +
                    run.preempted_by + "'; queued again, to resume from its checkpoint");
          st.outcomes[f.name] = job_status::queued;
          const auto at = std::find_if(st.queue.begin(), st.queue.end(),
                                       [&](const queued_entry& e) { return e.seq > q.seq; });
          st.queue.insert(at, std::move(q));
          release(self, f.job);
          schedule(self);
          return;
        }
        auto r = rep->report;
        if (run.sharing) {
          auto s = st.shares.find(f.name);
          if (s != st.shares.end()) r.share = s->second;
          r.share_changes = st.share_changes[f.name];
        }
        record_end(self, std::move(r));
        release(self, f.job);
        schedule(self);
      },
      // From the share_allocator: forward each job's new share to it, keep it for the report.
      [=](msg::group_up_atom, const std::string& group) { on_group_up(self, group); },
      // An agent drains or stops: every running job holding its group lets it leave at its next
      // step boundary. Answered with how many did (a job that cannot, or does not answer in
      // time, loses the group instead when the agent goes).
      [=](msg::group_leave_atom, const std::string& group) -> caf::result<std::int32_t> {
        std::vector<caf::actor> jobs;
        for (const auto& [id, run] : self->state.running) {
          const bool holds = std::any_of(run.held.begin(), run.held.end(),
                                         [&](const auto& h) { return h.first == group; });
          if (holds && run.actor) jobs.push_back(run.actor);
        }
        if (jobs.empty()) return 0;
        auto promise = std::make_shared<caf::response_promise>(self->make_response_promise());
        auto left = std::make_shared<std::size_t>(jobs.size());
        auto graceful = std::make_shared<std::int32_t>(0);
        const auto answered = [=](bool ok) {
          if (ok) ++*graceful;
          if (--*left == 0) promise->deliver(*graceful);
        };
        for (const auto& job : jobs)
          self->request(job, to_timespan(msg::group_leave_seconds), msg::group_leave_atom_v, group)
              .then([=](bool ok) { answered(ok); }, [=](const caf::error&) { answered(false); });
        return *promise;
      },
      [=](const msg::share_decision& d) {
        auto& st = self->state;
        for (std::size_t i = 0; i < d.names.size() && i < d.shares.size(); ++i)
          for (const auto& [id, run] : st.running)
            if (run.name == d.names[i] && run.sharing) {
              st.shares[run.name] = d.shares[i];
              ++st.share_changes[run.name];
              self->send(run.actor, msg::share_update{id, 0, d.shares[i]});
            }
      },
      // The run stops (runtime::interrupt): running jobs end at their next step boundary, after
      // a last checkpoint; queued ones never start.
      [=](msg::interrupt_atom) {
        auto& st = self->state;
        st.interrupted = true;
        for (const auto& [id, run] : st.running) {
          msg::drain d{id, 0, true};
          self->send(run.actor, d);
        }
        schedule(self);
      },
      [=](const msg::drain& d) {
        auto& st = self->state;
        auto it = st.running.find(d.job);
        if (it != st.running.end()) {
          self->send(it->second.actor, d);
          return;
        }
        for (auto q = st.queue.begin(); q != st.queue.end(); ++q)
          if (q->id == d.job) {
            auto entry = *q;
            st.queue.erase(q);
            end_unstarted(self, entry, job_status::cancelled, "cancelled before it started", false);
            break;
          }
        schedule(self);
      },
      // runtime::cancel: "" when the job is cancelled (a running one at its next step boundary),
      // else why not.
      [=](msg::cancel_atom, const std::string& name) -> std::string {
        auto& st = self->state;
        for (auto& [id, run] : st.running) {
          if (run.name != name) continue;
          if (run.actor) {
            self->send(run.actor, msg::drain{id, msg::any_generation, false});
            return "";
          }
          // Elastic, still waiting for min_devices: no actor to drain.
          end_unstarted(self, run.entry, job_status::cancelled, "cancelled before it started",
                        false);
          release(self, id);
          schedule(self);
          return "";
        }
        for (const auto& q : st.queue)
          if (q.cfg.name == name) {
            self->send(self, msg::drain{q.id, 0, false});
            return "";
          }
        const auto o = st.outcomes.find(name);
        return o == st.outcomes.end() ? "no job named '" + name + "'"
                                      : "job '" + name + "' has ended (" + name_of(o->second) + ")";
      },
      // runtime::inject: the running job takes the fault or says why not.
      [=](msg::inject_atom, const std::string& name,
          const std::string& spec) -> caf::result<std::string> {
        auto& st = self->state;
        for (auto& [id, run] : st.running)
          if (run.name == name && run.actor) {
            auto rp = self->make_response_promise<std::string>();
            self->request(run.actor, std::chrono::seconds(10), msg::inject_atom_v, spec)
                .then([rp](const std::string& why) mutable { rp.deliver(why); },
                      [rp, name](const caf::error&) mutable {
                        rp.deliver("job '" + name + "' ended before it took the fault");
                      });
            return rp;
          }
        const auto o = st.outcomes.find(name);
        return std::string(o == st.outcomes.end()
                               ? "no job named '" + name + "'"
                               : "job '" + name + "' is not running (" + name_of(o->second) + ")");
      },
      // runtime::jobs: queued in the order they would start, then running, then ended.
      [=](msg::jobs_atom) {
        return msg::local_ref<jobs_view>{std::make_shared<jobs_view>(view_of(self->state))};
      },
      [=](msg::wait_atom) -> caf::result<msg::local_ref<run_report_data>> {
        auto& st = self->state;
        st.sealed = true;
        auto rp = self->make_response_promise<msg::local_ref<run_report_data>>();
        st.waiters.push_back(rp);
        schedule(self);
        return rp;
      },
      [=](msg::query_atom) {
        // A snapshot for tests: (queued, running) job names.
        auto& st = self->state;
        std::vector<std::string> queued, running;
        for (const auto& q : st.queue) queued.push_back(q.cfg.name);
        for (const auto& [id, r] : st.running) running.push_back(r.name);
        return caf::make_message(queued, running);
      },
  };
}

}  // namespace troupe::actors
