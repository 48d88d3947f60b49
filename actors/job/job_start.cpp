#include "actors/job/job_start.hpp"

#include <algorithm>
#include <exception>

#include "actors/common/specs.hpp"
#include "actors/job/data_distributor.hpp"
#include "actors/job/job_checkpoint.hpp"
#include "actors/job/job_messages.hpp"
#include "actors/job/job_steps.hpp"
#include "core/error.hpp"
#include "core/fault_spec.hpp"
#include "core/median.hpp"
#include "core/rng.hpp"
#include "devices/device.hpp"
#include "policies/probe_pool.hpp"

namespace troupe::actors {
namespace {

// Every probe answered, or its worker was lost: the split's weights, then RUNNING.
void probes_done(job_self self) {
  auto& st = self->state;
  // A worker lost while the job starts has no figure: it takes the median of its group's
  // answers, else of all answers (it joins later, or never, at that weight).
  std::vector<double> answered;
  for (double s : st.probe_seconds)
    if (s > 0) answered.push_back(s);
  for (std::size_t r = 0; r < st.workers.size(); ++r) {
    if (st.probe_seconds[r] > 0) continue;
    std::vector<double> group;
    for (std::size_t q = 0; q < st.workers.size(); ++q)
      if (st.probe_seconds[q] > 0 && st.workers[q].group == st.workers[r].group)
        group.push_back(st.probe_seconds[q]);
    st.probe_seconds[r] =
        !group.empty() ? median(group) : (!answered.empty() ? median(answered) : 1e-3);
  }
  // A group's devices are identical, so they get one speed (policies/probe_pool.hpp); a cuda
  // group may hold different GPU models, so each keeps its own.
  std::vector<std::string> groups;
  std::vector<bool> pooled;
  for (const auto& w : st.workers) {
    groups.push_back(w.group);
    pooled.push_back(w.device != name_of(device_kind::cuda));
  }
  const auto speeds = policies::pool_probes_by_group(st.probe_seconds, groups, pooled);
  std::string text = "probe (ms per sample):";
  std::string per_group;
  for (std::size_t r = 0; r < st.workers.size(); ++r) {
    st.weights[r] = 1.0 / std::max(speeds[r], 1e-9);
    text += " " + st.workers[r].name + "=" + std::to_string(st.probe_seconds[r] * 1e3);
    if (pooled[r] && (r == 0 || groups[r - 1] != groups[r]))
      per_group += " " + groups[r] + "=" + std::to_string(speeds[r] * 1e3);
  }
  if (!per_group.empty()) text += "; a group's median:" + per_group;
  log(self, text);
  start_running(self);
}

// Edge 2 / 2' once every worker is ready: where do the split weights come from?
void choose_weights(job_self self) {
  auto& st = self->state;
  const auto& cfg = st.launch.cfg;
  st.weights.assign(st.workers.size(), 1.0);
  if (cfg.data.split == split_kind::even) {
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
  enter(self, job_phase::probing);
  st.answers = 0;
  // 0: not answered yet; -1: lost while the job starts (probes_done gives it its group's figure).
  st.probe_seconds.assign(st.workers.size(), 0.0);
  for (std::size_t k = 0; k < st.workers.size(); ++k) {
    if (st.workers[k].lost_at_start) {
      st.probe_seconds[k] = -1.0;
      ++st.answers;
      continue;
    }
    auto cmd = tagged<msg::probe_cmd>(self);
    cmd.rank = static_cast<std::int32_t>(k);
    cmd.batch = std::max<std::int64_t>(1, std::min<std::int64_t>(cfg.batch, 64));
    cmd.steps = 3;
    self->send(st.workers[k].actor, cmd);
  }
  if (st.answers >= static_cast<int>(st.workers.size())) probes_done(self);
}

void maybe_all_ready(job_self self) {
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
    return name_of(f.action) + (":" + f.target) + "@" + std::to_string(f.step);
  }
}

// The config's faults, and `--fault-soak N` random ones over the job's steps (from its seed).
std::vector<config::fault_config> job_faults(job_self self) {
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

// The model from the seed (or the checkpoint to resume from), and the sync mode.
void build_model(job_self self, const data_bundle& bundle) {
  auto& st = self->state;
  const auto& cfg = st.launch.cfg;
  st.data = bundle;
  auto model = models::make_model(model_spec_of(cfg.model, *bundle.train));
  st.store = std::make_shared<param_store>(model->param_count());
  rng r(cfg.seed);
  model->init_params(st.store->values.data(), r);
  st.prototype = std::move(model);
  // Passes are permutations of the training set only in the global mode without priority.
  if (cfg.data.mode == data_mode::global && !cfg.data.priority) st.ledger.emplace(bundle.train->n);
  const auto resume = checkpoint_resume(self, st.store->values.size());
  if (resume) checkpoint_restore(self, *resume);
  st.sync = make_job_sync(cfg, st.gate.job(), st.launch.step_deadline_seconds, st.replicas_here,
                          st.reduction_block);
  st.sync->start(self, st.store, resume ? &*resume : nullptr);
  checkpoint_init(self);
}

// What worker `rank` on device `dev` of `slot` needs to start.
std::shared_ptr<worker_setup> setup_of(job_self self, const group_slot& slot, int dev,
                                       std::int32_t rank,
                                       const policies::policy_table& supervision) {
  auto& st = self->state;
  const auto& cfg = st.launch.cfg;
  const auto& w = st.workers[static_cast<std::size_t>(rank)];
  auto setup = std::make_shared<worker_setup>();
  setup->job_name = cfg.name;
  setup->group = slot.group.name;
  setup->device.kind = slot.group.device;
  setup->device.base = slot.group.base;
  setup->device.name = w.name;
  setup->device.threads = slot.group.threads;
  setup->device.slowdown = slot.group.slowdown;
  setup->device.row_seconds = slot.group.row_seconds.value_or(0.0);
  setup->device.ordinal = dev;
  setup->device.layer_split = slot.group.layer_split;
  if (slot.group.shared) setup->device.share_group = w.name;  // one gate per shared device
  setup->share = st.share;
  setup->distributor = st.distributor;
  setup->prototype = st.prototype;
  setup->model_spec = model_spec_of(cfg.model, *st.data.train);
  setup->data = st.data;
  setup->params = st.sync->params_for(static_cast<std::size_t>(rank), st.store);
  setup->resume_optimizer = st.sync->replica_optimizer_state();
  setup->optimizer_replica = st.sync->optimizer_for(static_cast<std::size_t>(rank));
  setup->local_state = st.sync->local_state_for(static_cast<std::size_t>(rank));
  for (const auto& f : st.faults->faults())
    if ((f.action == fault_action::slow || f.action == fault_action::delay) &&
        (f.target == w.group || f.target == w.name))
      (f.action == fault_action::slow ? setup->slow : setup->delay).push_back(f);
  setup->sync_mode = cfg.sync.mode;
  setup->reduction_block = st.reduction_block;
  setup->optimizer = optimizer_spec_of(cfg.optimizer);
  setup->replica_in_agent = replica_in_agent(cfg, slot.group);
  setup->codec = cfg.sync.codec;
  setup->faults = st.faults;
  setup->max_hang_seconds = st.launch.step_deadline_seconds;
  setup->supervision = supervision;
  setup->restarts = {cfg.max_restarts, cfg.restart_window};
  setup->seed = cfg.seed;
  return setup;
}

}  // namespace

std::string inject_fault(job_self self, const std::string& spec) {
  auto& st = self->state;
  config::fault_config f;
  try {
    // Without "@STEP" the fault fires at the next step (step 0 is always in the past).
    f = config::parse_fault(spec.find('@') == std::string::npos ? spec + "@0" : spec, "inject");
  } catch (const input_error& e) {
    return e.what();
  }
  if (f.action == fault_action::slow || f.action == fault_action::delay)
    return "inject '" + spec + "': " + name_of(f.action) +
           " is set when a worker starts; a running job takes kill, hang, drop, oom, "
           "device-error or partition";
  const auto slash = f.target.find('/');
  const auto group = f.target.substr(0, slash);
  const auto slot = std::find_if(st.launch.slots.begin(), st.launch.slots.end(),
                                 [&](const group_slot& s) { return s.group.name == group; });
  if (slot == st.launch.slots.end())
    return "inject '" + spec + "': job '" + st.launch.cfg.name + "' has no devices in group '" +
           group + "'";
  if (slash != std::string::npos) {
    const int index = std::stoi(f.target.substr(slash + 1));
    if (std::find(slot->devices.begin(), slot->devices.end(), index) == slot->devices.end())
      return "inject '" + spec + "': job '" + st.launch.cfg.name + "' does not hold device " +
             f.target;
  }
  if (!st.faults) return "inject '" + spec + "': the job is still loading; try again";
  if (f.step <= st.step) {
    const auto shift = st.step + 1 - f.step;
    f.step += shift;
    if (f.until_step >= 0) f.until_step += shift;
  }
  st.faults->add(f);
  note_event(self, "fault", "fault injected: " + describe_fault(f));
  return "";
}

void on_data(job_self self, const data_bundle& bundle) {
  auto& st = self->state;
  const auto& cfg = st.launch.cfg;
  try {
    build_model(self, bundle);
  } catch (const input_error& e) {
    finish(self, job_status::failed, "job '" + cfg.name + "': " + e.what(), true);
    return;
  } catch (const std::exception& e) {
    finish(self, job_status::failed, "job '" + cfg.name + "': " + e.what());
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

  st.faults = std::make_shared<fault_plan>(job_faults(self));

  // Ask each supervisor for the workers of its devices; rank order = allocation order.
  enter(self, job_phase::spawning);
  for (const auto& slot : st.launch.slots)
    for (int dev : slot.devices)
      if (!spawn_worker(self, slot, dev)) return;
}

bool spawn_worker(job_self self, const group_slot& slot, int dev) {
  auto& st = self->state;
  const auto rank = static_cast<std::int32_t>(st.workers.size());
  worker_slot w;
  w.group = slot.group.name;
  w.name = slot.group.name + "/" + std::to_string(dev);
  w.device = name_of(slot.group.device);
  st.workers.push_back(w);
  std::shared_ptr<worker_setup> setup;
  try {
    setup = setup_of(self, slot, dev, rank, policies::policy_table(st.launch.cfg.supervision));
  } catch (const input_error& e) {
    finish(self, job_status::failed, "group '" + slot.group.name + "': " + e.what(), true);
    return false;
  }
  auto sw = tagged<msg::spawn_worker>(self);
  sw.rank = rank;
  sw.device_index = dev;
  sw.name = w.name;
  self->request(slot.supervisor, to_timespan(st.launch.step_deadline_seconds), sw,
                msg::local_ref<worker_setup>{setup})
      .then(
          [=](caf::actor& worker) {
            auto& st = self->state;
            st.workers[static_cast<std::size_t>(rank)].actor = worker;
            ++st.progress;
            if (st.phase == job_phase::spawning) maybe_all_ready(self);
          },
          [=](caf::error& e) { fail(self, e, "spawning worker " + sw.name); });
  return true;
}

void on_worker_ready(job_self self, const msg::worker_ready& m) {
  auto& st = self->state;
  if (!st.gate.admit(m) || m.rank < 0 || static_cast<std::size_t>(m.rank) >= st.workers.size())
    return;
  ++st.progress;
  // The restarted incarnation of a worker lost while the job starts: it joins as any restarted
  // worker, once the job runs (replay_start_failures).
  if (st.workers[static_cast<std::size_t>(m.rank)].lost_at_start) {
    st.start_readies.emplace_back(m, caf::actor_cast<caf::actor>(self->current_sender()));
    return;
  }
  if (st.phase != job_phase::spawning) return;
  st.workers[static_cast<std::size_t>(m.rank)].ready = true;
  st.workers[static_cast<std::size_t>(m.rank)].capability = m.capability;
  maybe_all_ready(self);
}

void on_probe_done(job_self self, const msg::probe_done& m) {
  auto& st = self->state;
  if (!st.gate.admit(m) || m.rank < 0 || static_cast<std::size_t>(m.rank) >= st.workers.size() ||
      st.workers[static_cast<std::size_t>(m.rank)].lost_at_start)
    return;
  st.probe_seconds[static_cast<std::size_t>(m.rank)] = m.seconds_per_sample;
  ++st.progress;
  if (++st.answers < static_cast<int>(st.workers.size())) return;
  probes_done(self);
}

bool on_start_failure(job_self self, const msg::worker_down& m) {
  auto& st = self->state;
  if (st.phase != job_phase::spawning && st.phase != job_phase::probing) return false;
  if (m.job != st.gate.job() || m.rank < 0 || static_cast<std::size_t>(m.rank) >= st.workers.size())
    return false;
  if (m.bad_input || m.action == failure_policy::fail_job || !st.sync ||
      !st.sync->survives_member_loss())
    return false;
  auto& w = st.workers[static_cast<std::size_t>(m.rank)];
  // A restarted incarnation lost again before the start: the earlier failure stands for both.
  if (!w.lost_at_start) st.start_downs.push_back(m);
  w.lost_at_start = true;
  const auto r = static_cast<std::size_t>(m.rank);
  const bool answered = st.phase == job_phase::probing && st.probe_seconds[r] > 0;
  w.ready = true;  // nothing more to wait for from it before RUNNING
  log(self, "worker " + w.name + " " + msg::cause_name(m) + " while the job starts: " + m.reason +
                (m.decision.empty() ? "" : " (" + m.decision + ")") +
                "; the job starts without it");
  if (st.phase == job_phase::spawning) {
    maybe_all_ready(self);
  } else if (!answered) {
    // Its probe will not come: it counts as answered, with its group's figure (probes_done).
    st.probe_seconds[r] = -1.0;
    if (++st.answers >= static_cast<int>(st.workers.size())) probes_done(self);
  }
  return true;
}

}  // namespace troupe::actors
