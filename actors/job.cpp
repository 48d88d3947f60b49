#include "actors/job.hpp"

#include <chrono>
#include <cmath>
#include <exception>

#include <caf/exit_reason.hpp>
#include <caf/system_messages.hpp>

#include "actors/allreduce_step.hpp"
#include "actors/data_distributor.hpp"
#include "actors/job_messages.hpp"
#include "actors/job_report.hpp"
#include "actors/local_step.hpp"
#include "actors/parameter_server.hpp"
#include "actors/rebalancer.hpp"
#include "actors/specs.hpp"
#include "core/error.hpp"
#include "core/fault_spec.hpp"
#include "core/rng.hpp"
#include "data/split.hpp"
#include "devices/device.hpp"
#include "models/optimizer.hpp"

namespace troupe::actors {
namespace {

using self_ptr = stateful<job_state>*;

// Edges 5, 6, 7: report, release everything the job holds, quit.
void finish(self_ptr self, const std::string& status, const std::string& error = "",
            bool bad_input = false) {
  auto& st = self->state;
  if (st.phase == job_phase::done) return;
  // sync: allreduce: release workers blocked in a reduction; a completed run's replicas must agree.
  if (st.allreduce) {
    if (status != "completed") {
      st.allreduce->abort("job " + status);
    } else if (const auto why = st.allreduce->check_replicas(); !why.empty()) {
      finish(self, "failed", why);
      return;
    }
  }
  if (st.step > 0) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "step time %.3f s: compute phase %.3f s, reduce+apply %.3f s, other %.3f s",
                  st.step_seconds_total, st.compute_phase_seconds, st.reduce_phase_seconds,
                  st.step_seconds_total - st.compute_phase_seconds - st.reduce_phase_seconds);
    log(self, buf);
  }
  st.phase = job_phase::done;
  auto data = std::make_shared<job_report_data>();
  data->report = make_report(self, status);
  data->report.error = error;
  data->report.bad_input = bad_input;
  auto rel = tagged<msg::release>(self);
  for (const auto& slot : st.launch.slots) self->send(slot.supervisor, rel);
  auto fin = tagged<msg::job_finished>(self);
  fin.name = st.launch.cfg.name;
  fin.status = status;
  fin.error = error;
  fin.bad_input = bad_input;
  if (st.launch.metrics_hub) self->send(st.launch.metrics_hub, fin);
  if (st.launch.task_manager)
    self->send(st.launch.task_manager, fin, msg::local_ref<job_report_data>{data});
  for (auto& s : st.shards) self->send_exit(s, caf::exit_reason::user_shutdown);
  if (st.distributor) self->send_exit(st.distributor, caf::exit_reason::user_shutdown);
  if (st.rebalancer) self->send_exit(st.rebalancer, caf::exit_reason::user_shutdown);
  if (st.ckpt.writer) self->send_exit(st.ckpt.writer, caf::exit_reason::user_shutdown);
  self->quit();
}

void fail(self_ptr self, const caf::error& e, const std::string& where) {
  finish(self, "failed", where + ": " + failure_text(self->system(), e), is_input_failure(e));
}

// sync: local (actors/local_step.hpp): every member steps its own replica; st.local_averaging
// says whether the replicas are averaged after it.
void send_local_cmds(self_ptr self, const std::vector<std::int32_t>& ranks) {
  auto& st = self->state;
  auto cmd = tagged<msg::local_cmd>(self);
  cmd.step = st.step;
  cmd.ranks = ranks;
  cmd.average = st.local_averaging;
  const msg::local_ref<allreduce_session> session{st.allreduce->session()};
  for (auto& w : st.workers) self->send(w.actor, cmd, session);
}

// False: the job failed.
bool on_local_applied(self_ptr self, double compute_s, double reduce_s) {
  auto& st = self->state;
  const double loss = st.step_stats.samples > 0
                          ? st.step_stats.loss_sum / static_cast<double>(st.step_stats.samples)
                          : 0.0;
  try {
    if (auto line = st.local->on_applied(st.step, st.local_averaging, compute_s, reduce_s, loss))
      log(self, *line);
  } catch (const std::exception& e) {
    finish(self, "failed", std::string("sync period: ") + e.what());
    return false;
  }
  return true;
}

void request_plan(self_ptr self, std::int64_t step) {
  auto req = tagged<msg::plan_request>(self);
  req.step = step;
  self->send(self->state.distributor, req);
}

bool should_stop(self_ptr self) {
  auto& st = self->state;
  if (st.step >= st.steps_total) return true;
  const auto& max_s = st.launch.cfg.max_seconds;
  // sync: local stops on time only after an average (the step deciding it saw the time was up).
  if (st.local && !st.local_averaging) return false;
  return max_s && seconds_since(st.train_t0) >= *max_s;
}

void evaluate(self_ptr self) {
  auto& st = self->state;
  st.phase = job_phase::evaluating;
  st.answers = 0;
  const auto n = static_cast<std::int64_t>(st.data.test ? st.data.test->n : 0);
  if (n == 0) {
    finish(self, "completed");
    return;
  }
  const auto counts = data::split_weighted(n, member_weights(self));
  std::int64_t offset = 0;
  st.eval_expected = 0;
  for (std::size_t r = 0; r < st.workers.size(); ++r) {
    if (!is_member(self, r)) continue;
    ++st.eval_expected;
    auto cmd = tagged<msg::eval_cmd>(self);
    cmd.version = st.step;
    cmd.rank = static_cast<std::int32_t>(r);
    cmd.offset = offset;
    cmd.count = counts[r];
    offset += counts[r];
    self->send(st.workers[r].actor, cmd);
  }
}

// Sends the plan's slices to the workers (step protocol 1-2). For the step in flight's
// successor the workers gather at once and park the slice until go_step.
void send_slices(self_ptr self, const msg::step_plan& plan,
                 const msg::local_ref<msg::index_list>& indices) {
  auto& st = self->state;
  std::int64_t offset = 0;
  for (std::size_t r = 0; r < st.workers.size(); ++r) {
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
void begin_step(self_ptr self, msg::step_plan plan, const msg::local_ref<msg::index_list>& indices,
                bool early) {
  auto& st = self->state;
  st.plan = std::move(plan);
  st.pending_done = 0;
  st.step_stats = {};
  st.grads.assign(st.workers.size(), nullptr);
  st.step_t0 = steady::now();
  st.stats.begin_step(st.workers.size());
  if (st.plan.data_epoch != st.pass) {
    st.pass = st.plan.data_epoch;
    st.pass_stats = {};
  }
  step_begun(self, indices);
  for (std::size_t r = 0; r < st.workers.size(); ++r) {
    if (st.plan.counts[r] <= 0) continue;
    if (early) {
      auto go = tagged<msg::go_step>(self);
      go.step = st.step;
      self->send(st.workers[r].actor, go);
    }
  }
  // Prefetch: the next plan (and its gather) is ready by the time this step is applied.
  if (st.step + 1 < st.steps_total) request_plan(self, st.step + 1);
}

void dispatch(self_ptr self, msg::step_plan plan, const msg::local_ref<msg::index_list>& indices) {
  send_slices(self, plan, indices);
  begin_step(self, std::move(plan), indices, false);
}

void next_step(self_ptr self) {
  auto& st = self->state;
  if (st.draining) {
    finish(self, "cancelled");
    return;
  }
  if (should_stop(self)) {
    // The last step's checkpoint, if one is being written, lands before the evaluation.
    if (!checkpoint_hold(self, [self] { evaluate(self); })) evaluate(self);
    return;
  }
  // Restarted workers enter here; the plan of this step is then asked again with them.
  if (join_at_boundary(self)) return;
  if (st.next_plan && st.next_plan->first.step == st.step) {
    auto p = std::move(*st.next_plan);
    st.next_plan.reset();
    begin_step(self, std::move(p.first), p.second, true);
  }
  // Otherwise the plan is on its way: the step_plan handler dispatches it.
}

void start_running(self_ptr self) {
  auto& st = self->state;
  st.phase = job_phase::running;
  std::string text = "split (" + st.launch.cfg.data.split + ") shares:";
  double sum = 0.0;
  for (double w : st.weights) sum += w;
  for (std::size_t r = 0; r < st.workers.size(); ++r) {
    char buf[96];
    std::snprintf(buf, sizeof buf, " %s=%.3f", st.workers[r].name.c_str(), st.weights[r] / sum);
    text += buf;
  }
  log(self, text);
  membership_init(self, st.launch.step_deadline_seconds);
  auto upd = tagged<msg::split_update>(self);
  upd.weights = st.weights;
  self->send(st.distributor, upd);
  if (st.launch.cfg.data.split == "adaptive") {
    st.rebalancer =
        self->spawn(rebalancer_actor, caf::actor_cast<caf::actor>(self), st.gate.job(),
                    st.gate.epoch(), st.workers.size(), st.launch.cfg.batch, rebalancer_options{});
    self->monitor(st.rebalancer);
  }
  if (st.allreduce)
    st.allreduce->open_epoch(st.gate.job(), st.gate.epoch(), static_cast<int>(st.workers.size()));
  st.train_t0 = steady::now();
  // A resumed job starts at its checkpoint's step (which may already be the last).
  if (should_stop(self)) {
    evaluate(self);
    return;
  }
  request_plan(self, st.step);
}

// After every worker is ready (edge 2 / 2'): where do the split weights come from?
void choose_weights(self_ptr self) {
  auto& st = self->state;
  const auto& cfg = st.launch.cfg;
  st.weights.assign(st.workers.size(), 1.0);
  if (cfg.data.split == "even") {
    start_running(self);
    return;
  }
  bool all_configured = true;
  std::size_t r = 0;
  for (const auto& slot : st.launch.slots)
    for (std::size_t i = 0; i < slot.devices.size(); ++i, ++r) {
      if (slot.group.weight)
        st.weights[r] = *slot.group.weight;
      else
        all_configured = false;
    }
  if (all_configured) {
    start_running(self);
    return;
  }
  if (cfg.deterministic) {
    // A measured probe differs run to run, and so would the split and the float sums: the
    // devices' own capability estimates keep deterministic runs repeatable.
    for (std::size_t k = 0; k < st.workers.size(); ++k) st.weights[k] = st.workers[k].capability;
    start_running(self);
    return;
  }
  st.phase = job_phase::probing;
  st.answers = 0;
  st.probe_seconds.assign(st.workers.size(), 0.0);
  for (std::size_t k = 0; k < st.workers.size(); ++k) {
    auto cmd = tagged<msg::probe_cmd>(self);
    cmd.rank = static_cast<std::int32_t>(k);
    cmd.batch = std::max<std::int64_t>(1, std::min<std::int64_t>(cfg.batch, 64));
    cmd.steps = 3;
    self->send(st.workers[k].actor, cmd);
  }
}

void maybe_all_ready(self_ptr self) {
  auto& st = self->state;
  if (st.phase != job_phase::spawning) return;
  for (const auto& w : st.workers)
    if (!w.ready || !w.actor) return;
  std::string names;
  for (const auto& w : st.workers) names += " " + w.name;
  log(self, "workers ready:" + names);
  choose_weights(self);
}

std::string describe_fault(const config::fault_config& f) {
  try {
    return config::fault_to_string(f);
  } catch (const std::exception&) {
    return f.action + ":" + f.target + "@" + std::to_string(f.step);
  }
}

// The config's faults, and `--fault-soak N` random ones over the job's steps (from its seed).
std::vector<config::fault_config> job_faults(self_ptr self) {
  auto& st = self->state;
  const auto& cfg = st.launch.cfg;
  auto faults = cfg.faults;
  if (cfg.fault_soak > 0 && st.steps_total > 2) {
    config::fault_space space;
    for (const auto& slot : st.launch.slots)
      space.groups.emplace_back(slot.group.name, static_cast<int>(slot.devices.size()));
    space.first_step = 1;
    space.last_step = st.steps_total - 1;
    auto drawn = config::random_faults(static_cast<std::size_t>(cfg.fault_soak), cfg.seed, space);
    log(self, "fault soak: " + std::to_string(drawn.size()) + " random faults over steps 1-" +
                  std::to_string(space.last_step));
    faults.insert(faults.end(), drawn.begin(), drawn.end());
  }
  if (faults.size() <= 20)
    for (const auto& f : faults) log(self, "fault scripted: " + describe_fault(f));
  return faults;
}

// Edge 1.
void on_data(self_ptr self, const data_bundle& bundle) {
  auto& st = self->state;
  const auto& cfg = st.launch.cfg;
  st.data = bundle;
  std::unique_ptr<models::optimizer> probe_opt;
  try {
    auto model = models::make_model(model_spec_of(cfg.model, *bundle.train));
    st.store = std::make_shared<param_store>(model->param_count());
    rng r(cfg.seed);
    model->init_params(st.store->values.data(), r);
    st.prototype = std::move(model);
    const auto resume = checkpoint_resume(self, st.store->values.size());
    if (resume) checkpoint_restore(self, *resume);
    const models::optimizer_spec os = optimizer_spec_of(cfg.optimizer);
    // sync: allreduce keeps the optimizer on the workers (actors/allreduce_step.hpp): no shards.
    if (cfg.sync.mode == "allreduce" || cfg.sync.mode == "local")
      st.allreduce = std::make_shared<job_allreduce>(cfg, st.launch.step_deadline_seconds);
    if (cfg.sync.mode == "local") st.local = std::make_shared<local_sync>(cfg);
    const auto slices = st.allreduce ? std::vector<std::pair<std::size_t, std::size_t>>{}
                                     : shard_slices(st.store->values.size(), cfg.sync.ps_shards);
    for (std::size_t k = 0; k < slices.size(); ++k) {
      shard_spec ss;
      ss.job = st.gate.job();
      ss.epoch = st.gate.epoch();
      ss.shard = static_cast<std::int32_t>(k);
      ss.offset = slices[k].first;
      ss.count = slices[k].second;
      ss.params = st.store;
      ss.optimizer = models::make_optimizer(os, ss.count);
      if (resume)
        ss.optimizer->load_state(slice_state(resume->parts.at(0)->optimizer, ss.offset, ss.count));
      ss.version = st.step;
      ss.job_actor = caf::actor_cast<caf::actor>(self);
      auto shard = self->spawn(parameter_server, std::move(ss));
      self->monitor(shard);
      st.shards.push_back(shard);
    }
    checkpoint_init(self);
  } catch (const input_error& e) {
    finish(self, "failed", "job '" + cfg.name + "': " + e.what(), true);
    return;
  } catch (const std::exception& e) {
    finish(self, "failed", "job '" + cfg.name + "': " + e.what());
    return;
  }
  st.steps_per_pass = step_sampler::steps_per_pass(bundle.train->n, cfg.batch);
  st.steps_total = st.steps_per_pass * cfg.epochs;
  if (cfg.max_steps) st.steps_total = std::min(st.steps_total, *cfg.max_steps);
  char buf[160];
  std::snprintf(buf, sizeof buf, "data: %zu train, %zu test samples; %zu parameters; %lld steps",
                bundle.train->n, bundle.test ? bundle.test->n : std::size_t{0},
                st.store->values.size(), static_cast<long long>(st.steps_total));
  log(self, buf);

  policies::policy_table supervision;
  try {
    supervision =
        policies::policy_table::from_config(cfg.supervision, "job '" + cfg.name + "' supervision");
  } catch (const input_error& e) {
    finish(self, "failed", e.what(), true);
    return;
  }
  st.mem.plan = std::make_shared<fault_plan>(job_faults(self));

  // Ask each supervisor for the workers of its devices; rank order = allocation order.
  st.phase = job_phase::spawning;
  for (const auto& slot : st.launch.slots) {
    for (int dev : slot.devices) {
      const auto rank = static_cast<std::int32_t>(st.workers.size());
      worker_slot w;
      w.group = slot.group.name;
      w.name = slot.group.name + "/" + std::to_string(dev);
      w.device = slot.group.device;
      st.workers.push_back(w);
      auto setup = std::make_shared<worker_setup>();
      setup->job_name = cfg.name;
      setup->group = slot.group.name;
      try {
        setup->device.kind = devices::parse_device_kind(slot.group.device);
        setup->device.base = devices::parse_device_kind(slot.group.base);
      } catch (const input_error& e) {
        finish(self, "failed", "group '" + slot.group.name + "': " + e.what(), true);
        return;
      }
      setup->device.name = w.name;
      setup->device.threads = slot.group.threads;
      setup->device.slowdown = slot.group.slowdown;
      setup->device.row_seconds = slot.group.row_seconds.value_or(0.0);
      setup->device.ordinal = dev;
      if (slot.group.shared) setup->device.share_group = w.name;  // one gate per shared device
      setup->share = st.share;
      setup->distributor = st.distributor;
      setup->prototype = st.prototype;
      setup->data = st.data;
      setup->params =
          st.allreduce ? st.allreduce->replica(static_cast<std::size_t>(rank), st.store) : st.store;
      for (const auto& f : st.mem.plan->faults())
        if ((f.action == "slow" || f.action == "delay") &&
            (f.target == w.group || f.target == w.name))
          (f.action == "slow" ? setup->slow : setup->delay).push_back(f);
      setup->sync_mode = cfg.sync.mode;
      setup->faults = st.mem.plan;
      setup->max_hang_seconds = st.launch.step_deadline_seconds;
      setup->supervision = supervision;
      setup->restarts = {cfg.max_restarts, cfg.restart_window};
      setup->seed = cfg.seed;
      auto sw = tagged<msg::spawn_worker>(self);
      sw.rank = rank;
      sw.device_index = dev;
      sw.name = w.name;
      self->request(slot.supervisor, to_timespan(st.launch.step_deadline_seconds), sw,
                    msg::local_ref<worker_setup>{setup})
          .then(
              [=](caf::actor& worker) {
                if (self->state.phase == job_phase::done) return;
                self->state.workers[static_cast<std::size_t>(rank)].actor = worker;
                ++self->state.progress;
                maybe_all_ready(self);
              },
              [=](caf::error& e) { fail(self, e, "spawning worker " + sw.name); });
    }
  }
}

// Every shard applied: the parameters are at version step + 1 (DESIGN §4 step 4).
void complete_step(self_ptr self) {
  auto& st = self->state;
  const double step_s = seconds_since(st.step_t0);
  const double reduce_s = seconds_since(st.reduce_t0);
  st.reduce_phase_seconds += reduce_s;
  st.store->publish(st.step + 1);
  if (st.allreduce) st.allreduce->publish(st.step + 1);
  st.step_seconds_total += step_s;
  st.samples_total += static_cast<std::int64_t>(st.step_stats.samples);
  st.pass_stats += st.step_stats;
  step_completed(self);
  st.grads.assign(st.grads.size(), nullptr);
  if (st.local && !on_local_applied(self, step_s - reduce_s, reduce_s)) return;
  ++st.step;
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
  sm.samples_per_second = static_cast<double>(st.samples_total) / st.step_seconds_total;
  sm.elapsed_seconds = seconds_since(st.job_t0);
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
  if (st.launch.metrics_hub) self->send(st.launch.metrics_hub, std::move(sm));
  checkpoint_boundary(self);
  next_step(self);
}

}  // namespace

caf::behavior job_actor(stateful<job_state>* self, job_launch launch) {
  auto& st = self->state;
  st.gate = epoch_gate{launch.id, 1};
  st.launch = std::move(launch);
  st.share->store(st.launch.cfg.share);
  st.job_t0 = steady::now();
  // Shards and the distributor are ours: one dying is the job failing (edge 7).
  self->set_down_handler([=](const caf::down_msg& d) {
    finish(self, "failed", "a job actor stopped: " + failure_text(self->system(), d.reason));
  });
  st.distributor =
      spawn_detached(self, data_distributor, st.gate.job(), st.gate.epoch(), st.launch.cfg);
  self->monitor(st.distributor);
  self->request(st.distributor, to_timespan(st.launch.step_deadline_seconds), msg::data_atom_v)
      .then([=](msg::local_ref<data_bundle>& b) { on_data(self, *b); },
            [=](caf::error& e) { fail(self, e, "loading data"); });
  // Edge 8: the watchdog.
  self->delayed_send(self, to_timespan(st.launch.step_deadline_seconds), msg::wait_atom_v);
  return {
      [=](msg::wait_atom) {
        auto& st = self->state;
        if (st.progress == st.watched_progress) {
          finish(self, "failed",
                 "no progress for " + std::to_string(st.launch.step_deadline_seconds) +
                     " s (step " + std::to_string(st.step) + ")");
          return;
        }
        st.watched_progress = st.progress;
        self->delayed_send(self, to_timespan(st.launch.step_deadline_seconds), msg::wait_atom_v);
      },
      [=](const msg::worker_ready& m) {
        auto& st = self->state;
        if (on_restarted_ready(self, m)) return;
        if (!st.gate.admit(m) || m.rank < 0 ||
            static_cast<std::size_t>(m.rank) >= st.workers.size())
          return;
        st.workers[static_cast<std::size_t>(m.rank)].ready = true;
        st.workers[static_cast<std::size_t>(m.rank)].capability = m.capability;
        ++st.progress;
        maybe_all_ready(self);
      },
      // Edge 3.
      [=](const msg::probe_done& m) {
        auto& st = self->state;
        if (!st.gate.admit(m) || st.phase != job_phase::probing) return;
        st.probe_seconds[static_cast<std::size_t>(m.rank)] = m.seconds_per_sample;
        ++st.progress;
        if (++st.answers < static_cast<int>(st.workers.size())) return;
        std::string text = "probe (ms per sample):";
        for (std::size_t r = 0; r < st.workers.size(); ++r) {
          st.weights[r] = 1.0 / std::max(st.probe_seconds[r], 1e-9);
          text += " " + st.workers[r].name + "=" + std::to_string(st.probe_seconds[r] * 1e3);
        }
        log(self, text);
        start_running(self);
      },
      [=](msg::step_plan& plan, msg::local_ref<msg::index_list>& indices) {
        auto& st = self->state;
        if (!st.gate.admit(plan) || st.phase != job_phase::running) return;
        ++st.progress;
        // The current step's plan goes out now; its successor's slices go out early (the
        // workers gather and park them) and start with go_step once this step is applied.
        if (plan.step == st.step && st.pending_done == 0 && st.pending_applied == 0) {
          dispatch(self, std::move(plan), indices);
        } else if (plan.step == st.step + 1) {
          send_slices(self, plan, indices);
          st.next_plan.emplace(std::move(plan), indices);
        }
      },
      [=](const msg::step_done& m, msg::local_ref<msg::grad_buffer>& grad) {
        auto& st = self->state;
        if (!accept_result(self, m, grad.ptr)) return;
        ++st.progress;
        const auto r = static_cast<std::size_t>(m.rank);
        // A re-planned second slice of the same step: the job still holds the first one's buffer.
        const bool second = st.grads[r] && st.grads[r] != grad.ptr;
        if (!st.grads[r]) st.grads[r] = grad.ptr;
        auto& w = st.workers[r];
        w.samples += m.samples;
        if (!second) w.steps += 1;
        w.compute_seconds += m.compute_seconds;
        st.stats.on_worker(r, m.samples, m.grad_sq_norm, m.compute_seconds);
        st.step_stats.loss_sum += m.loss_sum;
        st.step_stats.samples += static_cast<std::size_t>(m.samples);
        st.step_stats.correct += static_cast<std::size_t>(m.correct);
        if (st.pending_done > 0) return;
        // Every member reported: reduce in rank order (DESIGN §4 step 3).
        st.reduce_t0 = steady::now();
        st.compute_phase_seconds +=
            std::chrono::duration<double>(st.reduce_t0 - st.step_t0).count();
        auto cmd = tagged<msg::reduce_cmd>(self);
        cmd.step = st.step;
        cmd.total_samples = static_cast<std::int64_t>(st.step_stats.samples);
        // Slices in offset order: rank order without failures, and a re-planned slice sums
        // where its samples are.
        auto set = std::make_shared<msg::grad_set>();
        for (const auto& [offset, res] : st.mem.results) {
          cmd.ranks.push_back(res.rank);
          set->push_back(res.grad);
        }
        reduce_sent(self);
        msg::local_ref<msg::grad_set> ref{std::move(set)};
        if (st.local) {
          const auto& max_s = st.launch.cfg.max_seconds;
          st.local_averaging =
              st.local->averages(st.step, st.step + 1 >= st.steps_total ||
                                              (max_s && seconds_since(st.train_t0) >= *max_s));
          st.pending_applied = static_cast<int>(st.workers.size());
          send_local_cmds(self, cmd.ranks);
        } else if (st.allreduce) {
          // Every member reduces, one without samples this step too (replicas stay equal).
          st.pending_applied = static_cast<int>(st.workers.size());
          const msg::local_ref<allreduce_session> session{st.allreduce->session()};
          for (auto& w : st.workers) self->send(w.actor, cmd, session);
        } else {
          st.pending_applied = static_cast<int>(st.shards.size());
          for (auto& s : st.shards) self->send(s, cmd, ref);
        }
        // allreduce, local: |G_B|^2 of the same sums (read-only) while the members reduce; ps:
        // the shards send their parts with `applied` (the last one closes the step's statistics).
        st.step_grad_sq = 0.0;
        if (st.shards.empty()) st.stats.end_step(st.grads, cmd.total_samples);
        // A re-planned step's timings mix two plans over a changed membership: no decision on it.
        if (st.rebalancer && !st.stats.step_replanned()) {
          // The step's timings are complete now: deciding while the shards reduce gets the
          // decision to the distributor before the plan of step + 2 is requested.
          auto t = tagged<msg::step_metrics>(self);
          t.step = st.step + 1;
          t.worker_samples = st.stats.step_samples();
          t.worker_compute_seconds = st.stats.step_compute();
          self->send(st.rebalancer, std::move(t));
        }
      },
      [=](const msg::applied& m) {
        auto& st = self->state;
        if (!st.gate.admit_since(m, st.mem.reduce_epoch)) return;
        if (st.phase != job_phase::running || m.step != st.step || st.pending_applied <= 0) return;
        ++st.progress;
        st.step_grad_sq += m.grad_sq;
        if (--st.pending_applied > 0) return;
        if (!st.shards.empty()) st.stats.end_step(st.step_grad_sq);
        // A checkpoint still being written holds this step back (job_checkpoint.hpp).
        if (checkpoint_hold(self, [self] { complete_step(self); })) return;
        complete_step(self);
      },
      // A share decision from the task manager (cluster-wide, so any epoch): to every worker, and
      // into the cell that a restarted worker starts from.
      [=](const msg::share_update& u) {
        self->state.share->store(u.share);
        auto fwd = u;
        fwd.epoch = self->state.gate.epoch();
        for (const auto& w : self->state.workers)
          if (w.actor) self->send(w.actor, fwd);
      },
      // A rebalancer decision (split: adaptive): log, count, and hand it to the distributor,
      // whose next plan uses it.
      [=](const msg::split_decision& d) {
        auto& st = self->state;
        if (!st.gate.admit(d) || st.phase != job_phase::running ||
            d.slices.size() != st.workers.size())
          return;
        ++st.progress;
        ++st.stats.rebalances;
        // A rank out of the membership keeps its last weight for when it rejoins.
        for (std::size_t r = 0; r < st.workers.size(); ++r)
          if (is_member(self, r)) st.weights[r] = static_cast<double>(d.slices[r]);
        std::string text = "rebalance " + std::to_string(st.stats.rebalances) + " after step " +
                           std::to_string(d.step) + ":";
        for (std::size_t r = 0; r < st.workers.size(); ++r)
          text += " " + st.workers[r].name + "=" + std::to_string(d.slices[r]);
        log(self, text + " (" + d.reason + ")");
        auto fwd = tagged<msg::split_update>(self);
        fwd.weights = member_weights(self);
        self->send(st.distributor, fwd);
      },
      [=](const msg::ckpt_part& m, const msg::local_ref<ckpt_shard_part>& part) {
        checkpoint_part(self, m, part);
      },
      [=](const msg::ckpt_written& m) { checkpoint_written(self, m); },
      [=](const msg::eval_done& m) {
        auto& st = self->state;
        if (!st.gate.admit(m) || st.phase != job_phase::evaluating) return;
        ++st.progress;
        st.eval_stats.loss_sum += m.loss_sum;
        st.eval_stats.samples += static_cast<std::size_t>(m.samples);
        st.eval_stats.correct += static_cast<std::size_t>(m.correct);
        if (++st.answers < st.eval_expected) return;
        finish(self, "completed");
      },
      [=](const msg::worker_down& m) {
        ++self->state.progress;
        if (auto why = on_worker_down(self, m)) finish(self, "failed", *why, m.kind == "input");
      },
      [=](const msg::step_timeout& t) { on_step_timeout(self, t); },
      // Edge 6.
      [=](const msg::drain& m) {
        auto& st = self->state;
        if (!st.gate.admit(m)) return;
        st.draining = true;
        if (st.phase != job_phase::running) finish(self, "cancelled");
      },
      [=](msg::query_atom) {
        return caf::make_message(self->state.gate.dropped(), self->state.step);
      },
  };
}

}  // namespace troupe::actors
