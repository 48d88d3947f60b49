#include "actors/workers/device_worker.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <utility>

#include "actors/agents/remote_device.hpp"
#include "actors/checkpoint/checkpoint_state.hpp"
#include "actors/common/fault_delay.hpp"
#include "actors/sync/allreduce_step.hpp"
#include "actors/sync/block_sums.hpp"
#include "actors/sync/local_step.hpp"
#include "collectives/errors.hpp"
#include "collectives/inproc/reduce_kernel.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "devices/sim_device.hpp"

namespace troupe::actors {
namespace {

// Copies rows idx[0..count) of `d` into `rows`.
void gather(gathered_rows& rows, const data::dataset& d, const std::int64_t* idx,
            std::size_t count) {
  const std::size_t f = d.features();
  rows.x.resize(count * f);
  for (std::size_t i = 0; i < count; ++i)
    std::memcpy(rows.x.data() + i * f, d.row(static_cast<std::size_t>(idx[i])), f * sizeof(float));
  rows.labels.clear();
  if (!d.labels.empty()) {
    rows.labels.resize(count);
    for (std::size_t i = 0; i < count; ++i)
      rows.labels[i] = d.labels[static_cast<std::size_t>(idx[i])];
  }
  rows.targets.clear();
  if (!d.targets.empty()) {
    rows.targets.resize(count);
    for (std::size_t i = 0; i < count; ++i)
      rows.targets[i] = d.targets[static_cast<std::size_t>(idx[i])];
  }
}

// data.priority: the slice's importance weights and indices (cleared when the plan has none).
void gather_priority(gathered_rows& rows, const msg::index_list& idx, std::int64_t offset,
                     std::int64_t count) {
  rows.weights.clear();
  rows.indices.clear();
  if (idx.weights.size() != idx.size()) return;
  const auto first = static_cast<std::size_t>(offset), n = static_cast<std::size_t>(count);
  rows.weights.assign(idx.weights.begin() + first, idx.weights.begin() + first + n);
  rows.indices.assign(idx.begin() + first, idx.begin() + first + n);
}

// A contiguous range of rows needs no index list: the batch points into the dataset itself.
models::batch view(const data::dataset& d, std::size_t offset, std::size_t count) {
  models::batch b;
  b.x = d.row(offset);
  b.size = count;
  if (!d.labels.empty()) b.labels = d.labels.data() + offset;
  if (!d.targets.empty()) b.targets = d.targets.data() + offset;
  return b;
}

// |G_b|^2 of the MEAN gradient from |sum over b samples|^2: what the noise-scale estimator
// regresses on 1/b (policies/noise_scale.hpp).
double mean_sq_norm(double sum_sq, std::size_t b) {
  return b > 0 ? sum_sq / (static_cast<double>(b) * static_cast<double>(b)) : 0.0;
}

// The optimizer replica of sync: allreduce, made on first use (from a resumed run's state).
replica_optimizer& replica_of(worker_state& st) {
  if (!st.replica) {
    if (st.setup->optimizer_replica) {
      st.replica = st.setup->optimizer_replica;  // the job's, kept across incarnations
      // Members that share one replica meet here on their own threads: the job set its resume
      // state before any started (allreduce_sync::start), so only a rank's own replica is set.
      if (!st.replica->replicated && !st.replica->resume && st.setup->resume_optimizer)
        st.replica->resume = st.setup->resume_optimizer;
    } else {
      st.replica = std::make_shared<replica_optimizer>();
      st.replica->resume = st.setup->resume_optimizer;
    }
  }
  return *st.replica;
}

// A replica that lives in the agent too: sent whenever the agent does not hold it (a new link,
// or a reduction that failed), from this worker's parameters and optimizer state.
void send_replica(worker_state& st) {
  if (st.in_agent->synced()) return;
  auto& r = replica_of(st);
  models::optimizer_state state;
  if (r.replicated)
    state = r.replicated->state();
  else if (r.resume)
    state = *r.resume;
  const auto& p = st.setup->params->values;
  st.in_agent->sync(p.data(), p.size(), state);
}

// The `slow` faults of this device (worker_setup::slow): the sim slowdown for `step`.
void apply_slow_faults(worker_state& st, std::int64_t step) {
  if (st.setup->slow.empty()) return;
  auto* sim = dynamic_cast<devices::sim_device*>(st.device.get());
  if (!sim) return;
  double factor = 1.0;
  for (const auto& f : st.setup->slow)
    if (step >= f.step && (f.until_step < 0 || step <= f.until_step)) factor *= f.factor;
  const double want = st.setup->device.slowdown * factor;
  if (sim->slowdown() != want) sim->set_slowdown(want);
}

// A fault of the plan that fires on this worker at `step` (actors/common/fault_injection.hpp).
// False: the step must not be computed (the worker quit) or its result is lost (drop: computed, not
// sent).
enum class fault_effect { none, drop, stop };
fault_effect inject(stateful<worker_state>* self, std::int64_t step) {
  auto& st = self->state;
  if (!st.setup->faults) return fault_effect::none;
  const auto f = st.setup->faults->fire(st.setup->device.name, st.setup->group, step);
  if (!f) return fault_effect::none;
  const std::string at = " at step " + std::to_string(step);
  if (f->action == fault_action::kill) {
    self->quit(crash_failure("injected kill" + at));
    return fault_effect::stop;
  }
  if (f->action == fault_action::drop) return fault_effect::drop;
  if (f->action == fault_action::oom || f->action == fault_action::device_error) {
    // The device fails for real where it can; the supervisor classifies the error's text.
    try {
      st.device->provoke(f->action == fault_action::oom ? devices::device_fault::out_of_memory
                                                        : devices::device_fault::error);
    } catch (const std::exception& e) {
      self->quit(crash_failure(st.setup->device.name + ": " + e.what() + at));
      return fault_effect::stop;
    }
  }
  // hang / partition: silent until released by the supervisor, or for the hang's seconds.
  const double wait = f->seconds > 0 ? f->seconds : st.setup->max_hang_seconds;
  if (st.setup->cancel->wait_for(wait) || f->action == fault_action::partition) {
    self->quit(crash_failure(std::string("injected ") + name_of(f->action) + at + ": released"));
    return fault_effect::stop;
  }
  return fault_effect::none;
}

std::string kill_text(std::int64_t step, fault_phase phase) {
  return "injected kill at step " + std::to_string(step) +
         (phase == fault_phase::compute ? std::string() : " (" + std::string(name_of(phase)) + ")");
}

// A `kill` of the plan in `phase` of the step (reduce, apply; compute is inject's): the worker
// quits. True when it did.
bool injected_kill(stateful<worker_state>* self, std::int64_t step, fault_phase phase) {
  auto& st = self->state;
  if (!st.setup->faults ||
      !st.setup->faults->fire(st.setup->device.name, st.setup->group, step, phase))
    return false;
  self->quit(crash_failure(kill_text(step, phase)));
  return true;
}

// Runs the gathered slice of `cmd` and reports it to the job.
// `parked`: the slice waited for the parameters, so the step was ready when they were published;
// so was an early slice (compute_cmd::early) whose worker only got to it after that.
void compute(stateful<worker_state>* self, const caf::actor& job, const msg::compute_cmd& cmd,
             double gather_s, bool parked) {
  auto& st = self->state;
  const auto effect = inject(self, cmd.step);
  if (effect == fault_effect::stop) return;
  // A second slice of the same step (re-planned after another member failed): the job still
  // holds the first one's buffer.
  if (st.computed_step == cmd.step)
    st.grad = std::make_shared<std::vector<float>>(st.model->param_count(), 0.0f);
  // A replica in an agent computes a step twice only when the step runs again (a process ring
  // never regroups slices): the agent would add the new gradient to the one it kept, so it
  // gets its replica anew, which drops that.
  if (st.in_agent && st.computed_step == cmd.step) st.in_agent->desync();
  models::batch b;
  b.x = st.rows.x.data();
  b.size = static_cast<std::size_t>(cmd.count);
  if (!st.rows.labels.empty()) b.labels = st.rows.labels.data();
  if (!st.rows.targets.empty()) b.targets = st.rows.targets.data();
  const bool prioritised = !st.rows.weights.empty();
  if (prioritised) {
    b.weights = st.rows.weights.data();
    st.sample_loss.assign(b.size, 0.0f);
    b.sample_loss = st.sample_loss.data();
  }
  apply_slow_faults(st, cmd.step);
  devices::step_timing timing;
  if (parked || cmd.early) timing.start_lag_seconds = st.setup->params->seconds_since_published();
  models::step_stats stats;
  double grad_sq = 0.0;
  const std::int64_t start_ns = steady_ns_now();
  try {
    if (st.in_agent) {
      send_replica(st);
      // Under the canonical reduction the agent keeps one sum per block; a slice starts at a
      // block boundary of the step's order.
      const auto block =
          static_cast<std::size_t>(std::max<std::int64_t>(0, st.setup->reduction_block));
      const std::uint64_t first = block > 0 ? static_cast<std::uint64_t>(cmd.offset) / block : 0;
      stats = st.in_agent->kept_step(cmd.step, b, &timing, &grad_sq, block, first);
    } else if (st.setup->reduction_block > 0) {
      const auto block = static_cast<std::size_t>(st.setup->reduction_block);
      const std::size_t n = st.model->param_count();
      st.grad->resize((b.size + block - 1) / block * n);
      stats =
          st.device->run_blocks(*st.model, st.setup->params->values.data(), b,
                                st.setup->data.train->features(), block, st.grad->data(), &timing);
      grad_sq = block_sums_sq_norm(*st.grad, n, st.block_sum);
    } else {
      stats = st.device->run_step(*st.model, st.setup->params->values.data(), b, st.grad->data(),
                                  &timing);
      grad_sq = collectives::sq_norm(st.grad->data(), st.grad->size());
    }
  } catch (const std::exception& e) {
    // A device that failed (an agent lost mid-call): the supervisor classifies this text.
    self->quit(crash_failure(st.setup->device.name + ": " + e.what()));
    return;
  }
  const std::int64_t end_ns = steady_ns_now();
  st.computed_step = cmd.step;
  st.setup->computed->fetch_add(1, std::memory_order_relaxed);
  st.computed_samples = static_cast<std::int64_t>(stats.samples);
  msg::step_done done{cmd.job,
                      cmd.generation,
                      cmd.step,
                      st.rank,
                      static_cast<std::int64_t>(stats.samples),
                      stats.loss_sum,
                      static_cast<std::int64_t>(stats.correct),
                      mean_sq_norm(grad_sq, stats.samples),
                      timing.compute_seconds,
                      timing.gate_wait_seconds,
                      gather_s,
                      static_cast<std::int64_t>(timing.transfer_bytes),
                      start_ns,
                      end_ns};
  if (effect == fault_effect::drop) return;
  const msg::local_ref<msg::grad_buffer> grad{st.grad};
  // sync: ps pushes the gradient with step_done: that is what a slow link holds back.
  const double delay =
      st.setup->sync_mode == sync_mode::ps ? delay_seconds(st.setup->delay, cmd.step) : 0;
  if (delay > 0)
    self->delayed_send(job, to_timespan(delay), done, grad);
  else
    self->send(job, done, grad);
  if (prioritised && st.setup->distributor) {
    auto l = std::make_shared<msg::sample_loss_list>();
    l->indices = st.rows.indices;
    l->losses = st.sample_loss;
    self->send(st.setup->distributor,
               msg::sample_losses{cmd.job, cmd.generation, cmd.step, st.rank},
               msg::local_ref<msg::sample_loss_list>{std::move(l)});
  }
}

// sync: allreduce / local: a `delay` fault holds this worker's contribution to the step's
// reduction back by re-sending the command to itself on a timer, once per step. True: held back.
template <class Cmd>
bool hold_back(stateful<worker_state>* self, const Cmd& cmd,
               const msg::local_ref<allreduce_session>& session) {
  auto& st = self->state;
  if (st.delayed_step == cmd.step) return false;
  const double delay = delay_seconds(st.setup->delay, cmd.step);
  if (delay <= 0) return false;
  st.delayed_step = cmd.step;
  self->delayed_send(self, to_timespan(delay), cmd, session);
  return true;
}

// Runs a reduction step; false when the worker quit on its failure.
// This replica's part in a reduction of `cmd.step` over `cmd.ranks`: its gradient sum and sample
// count when it computed a slice of that step, else nothing but its parameters.
template <class Cmd>
replica_step replica_step_of(const worker_state& st, const Cmd& cmd) {
  replica_step rs;
  rs.rank = st.rank;
  rs.contributed = st.computed_step == cmd.step &&
                   std::find(cmd.ranks.begin(), cmd.ranks.end(), st.rank) != cmd.ranks.end();
  rs.grad = st.grad->data();
  rs.samples = rs.contributed ? st.computed_samples : 0;
  rs.params = st.setup->params->values.data();
  rs.count = st.setup->params->values.size();
  return rs;
}

// The reducer knows the generation's members by their index among the members (a rank still
// joining is none); false when this worker is not one.
bool member_index(const worker_state& st, const allreduce_session& session, replica_step& rs) {
  const auto r = static_cast<std::size_t>(st.rank);
  if (r >= session.index_of.size() || session.index_of[r] < 0) return false;
  rs.rank = session.index_of[r];
  return true;
}

// After a member failed mid-step the job says what each member contributes (the sum of the
// slices it computed, perhaps with the failed member's).
void contribute_as_told(const allreduce_session& session, replica_step& rs) {
  if (session.contribution.empty()) return;
  const auto m = static_cast<std::size_t>(rs.rank);
  const auto& c = session.contribution.at(m);
  rs.contributed = c != nullptr;
  if (c) rs.grad = c->data();
  rs.samples = c ? session.contribution_samples.at(m) : 0;
}

// A `kill` in phase apply: thrown between the reduction (or the local step's start) and the
// optimizer, so the replica stays unapplied.
std::function<void()> apply_kill(stateful<worker_state>* self, std::int64_t step) {
  return [self, step] {
    const auto& setup = *self->state.setup;
    if (setup.faults &&
        setup.faults->fire(setup.device.name, setup.group, step, fault_phase::apply))
      throw runtime_failure(kill_text(step, fault_phase::apply));
  };
}

enum class reduce_result { applied, dropped, failed };

template <class F>
reduce_result reduce_guarded(stateful<worker_state>* self, F&& f) {
  try {
    f();
  } catch (const collectives::collective_error& e) {
    // Aborted: the job ends or moved to a new generation and no longer waits for this step.
    if (e.kind() == collectives::failure_kind::aborted) return reduce_result::dropped;
    self->quit(crash_failure(e.what()));
    return reduce_result::failed;
  } catch (const std::exception& e) {
    self->quit(crash_failure(e.what()));
    return reduce_result::failed;
  }
  return reduce_result::applied;
}

}  // namespace

caf::behavior device_worker(stateful<worker_state>* self, caf::actor job, msg::spawn_worker spec,
                            msg::local_ref<worker_setup> setup) {
  auto& st = self->state;
  st.gate = generation_gate{spec.job, spec.generation};
  keep_exception_text(self);
  st.rank = spec.rank;
  st.setup = setup;
  // Edge 1 / 3.
  try {
    st.device = setup->agents ? make_remote_device(self->system(), *setup)
                              : devices::make_device(setup->device);
    st.device->set_share(setup->job_name, setup->share->load());
    if (setup->replica_in_agent) st.in_agent = dynamic_cast<agent_replica*>(st.device.get());
    st.model = setup->prototype->clone();
    st.grad = std::make_shared<std::vector<float>>(st.model->param_count(), 0.0f);
  } catch (const troupe::runtime_failure& e) {
    // An agent that cannot be reached now may be back later: a crash, not bad input.
    self->quit(crash_failure(setup->device.name + ": " + e.what()));
    return {};
  } catch (const std::exception& e) {
    self->quit(input_failure(setup->device.name + ": " + e.what()));
    return {};
  }
  self->send(job, msg::worker_ready{spec.job, spec.generation, spec.rank, st.device->capability()});
  return {
      // Edge 2: one step's slice.
      [=](const msg::compute_cmd& cmd, const msg::local_ref<msg::index_list>& indices) {
        auto& st = self->state;
        // A newer generation: the membership changed and the job re-plans; a parked slice is void.
        if (cmd.generation > st.gate.generation()) st.parked.reset();
        if (!st.gate.follow(cmd)) return;
        stopwatch sw;
        gather(st.rows, *st.setup->data.train, indices->data() + cmd.offset,
               static_cast<std::size_t>(cmd.count));
        gather_priority(st.rows, *indices, cmd.offset, cmd.count);
        const double gather_s = sw.seconds();
        const auto version = st.setup->params->version.load();
        if (version == cmd.version) {
          compute(self, job, cmd, gather_s, false);
        } else if (version + 1 == cmd.version) {
          // Its rows move aside: a slice computed before its go_step gathers into `rows`.
          std::swap(st.rows, st.parked_rows);
          st.parked = cmd;
          st.parked_gather_seconds = gather_s;
        } else {
          self->quit(crash_failure("parameter version " + std::to_string(version) + " where step " +
                                   std::to_string(cmd.step) + " needs " +
                                   std::to_string(cmd.version)));
        }
      },
      [=](const msg::go_step& go) {
        auto& st = self->state;
        if (!st.gate.follow(go) || !st.parked || st.parked->step != go.step ||
            st.parked->generation != go.generation)
          return;
        const auto cmd = *st.parked;
        st.parked.reset();
        std::swap(st.rows, st.parked_rows);
        compute(self, job, cmd, st.parked_gather_seconds, true);
      },
      // sync: allreduce: reduce with the other members, apply this replica's optimizer.
      [=](const msg::reduce_cmd& cmd, const msg::local_ref<allreduce_session>& session) {
        auto& st = self->state;
        if (!st.gate.follow(cmd) || !session || hold_back(self, cmd, session)) return;
        if (injected_kill(self, cmd.step, fault_phase::reduce)) return;
        auto& replica = replica_of(st);
        auto rs = replica_step_of(st, cmd);
        if (!member_index(st, *session, rs)) return;
        rs.before_apply = apply_kill(self, cmd.step);
        rs.total_samples = cmd.total_samples;
        contribute_as_told(*session, rs);
        replica_step::times times;
        rs.timing = &times;
        double grad_sq = 0.0;
        std::optional<agent_part> part;
        if (st.in_agent) {
          part = st.in_agent->reduce_part(cmd.step, rs.contributed, rs.samples, cmd.total_samples,
                                          session->deadline_seconds);
          rs.agent = &*part;
          rs.grad = nullptr;
          rs.gone = st.in_agent->lost();
        }
        const auto result = reduce_guarded(self, [&] {
          try {
            grad_sq = allreduce_and_apply(replica, *session, rs);
          } catch (...) {
            if (st.in_agent) {
              st.in_agent->desync();
              st.in_agent->abort_ring();
            }
            throw;
          }
          if (!st.in_agent) return;
          try {
            st.in_agent->finish_reduce(session->abort);
          } catch (const collectives::collective_error& e) {
            // The job dropped the reduction while the agent answered, but the replica here has
            // applied the step: this member applied it (saying "dropped" would have the job run
            // the step again on top). The agent's copy is in doubt, so it is sent anew.
            if (e.kind() != collectives::failure_kind::aborted) throw;
            st.in_agent->desync();
            st.in_agent->abort_ring();
          }
        });
        // Aborted (a member was lost): this replica did not apply. Said so that the job knows
        // whether any member did (it then copies that replica over the others) or none (it runs
        // the step again).
        if (result == reduce_result::dropped)
          self->send(job, msg::reduce_dropped{cmd.job, cmd.generation, cmd.step, st.rank});
        if (result != reduce_result::applied) return;
        msg::applied done{cmd.job, cmd.generation, cmd.step, st.rank, cmd.step + 1};
        done.grad_sq = grad_sq;
        done.sum_seconds = times.sum;
        done.apply_seconds = times.apply;
        self->send(job, done);
      },
      // sync: local: a local step on this replica; every tau steps the parameter average.
      [=](const msg::local_cmd& cmd, const msg::local_ref<allreduce_session>& session) {
        auto& st = self->state;
        // follow: an average run again comes in the generation that replaced the step's.
        if (!st.gate.follow(cmd) || !session || (cmd.average && hold_back(self, cmd, session)))
          return;
        if (injected_kill(self, cmd.step, fault_phase::reduce)) return;
        if (!st.local) {
          // The job's replica for this rank, kept across incarnations; the checkpoint's
          // optimizer state until the optimizer is made.
          st.local =
              st.setup->local_state ? st.setup->local_state : std::make_shared<local_replica>();
          if (!st.local->opt.replicated && !st.local->opt.resume)
            st.local->opt.resume = st.setup->resume_optimizer;
        }
        auto rs = replica_step_of(st, cmd);
        if (!member_index(st, *session, rs)) return;
        rs.step = cmd.step;
        contribute_as_told(*session, rs);
        rs.before_apply = apply_kill(self, cmd.step);
        const auto result = reduce_guarded(self, [&] {
          local_step_apply(*st.local, *session, rs, cmd.average || cmd.average_only,
                           cmd.average_only);
        });
        if (result == reduce_result::dropped)
          self->send(job, msg::reduce_dropped{cmd.job, cmd.generation, cmd.step, st.rank});
        if (result != reduce_result::applied) return;
        self->send(job, msg::applied{cmd.job, cmd.generation, cmd.step, st.rank, cmd.step + 1});
      },
      // sync: allreduce checkpoints: after step `c.step` every replica (parameters and optimizer
      // state) is the same, so one member's copy is the job's. sync: local: after an average
      // the parameters are, and this member's optimizer state stands for all. The job sends this
      // after the step's last `applied` and before the next step's command: the copy is exactly
      // that step.
      // optimizer.form: distributed: the parameters are every member's, the moments this
      // member's own, named by its rank (the job assembles the members' parts into one).
      [=](const msg::ckpt_capture& c) {
        auto& st = self->state;
        if (c.job != st.gate.job()) return;
        const auto* opt = st.replica ? &*st.replica : st.local ? &st.local->opt : nullptr;
        const bool distributed = opt && !opt->replicated && !opt->m.empty();
        if (!opt || (!opt->replicated && !distributed)) return;
        auto part = std::make_shared<ckpt_shard_part>();
        part->params = st.setup->params->values;
        part->optimizer = distributed ? merge_rank_states({{st.rank, moments_of(*opt)}})
                                      : opt->replicated->state();
        self->send(job, msg::ckpt_part{c.job, c.generation, c.step, 0, c.step},
                   msg::local_ref<ckpt_shard_part>{std::move(part)});
      },
      [=](const msg::share_update& u) {
        auto& st = self->state;
        // follow, not admit: the job stamps its own generation, which this worker may not have seen
        // yet (a membership change whose first slice has not arrived).
        if (st.gate.follow(u)) st.device->set_share(st.setup->job_name, u.share);
      },
      [=](const msg::eval_cmd& cmd) {
        auto& st = self->state;
        if (!st.gate.follow(cmd)) return;
        if (injected_kill(self, cmd.version, fault_phase::eval)) return;
        const auto& test = *st.setup->data.test;
        const auto* params = st.setup->params->values.data();
        models::step_stats total;
        constexpr std::int64_t chunk = 1024;  // bounds the activation scratch
        for (std::int64_t at = cmd.offset; at < cmd.offset + cmd.count; at += chunk) {
          const std::int64_t n = std::min(chunk, cmd.offset + cmd.count - at);
          auto b = view(test, static_cast<std::size_t>(at), static_cast<std::size_t>(n));
          total += st.device->run_eval(*st.model, params, b);
        }
        self->send(job, msg::eval_done{cmd.job, cmd.generation, st.rank,
                                       static_cast<std::int64_t>(total.samples), total.loss_sum,
                                       static_cast<std::int64_t>(total.correct)});
      },
      [=](const msg::probe_cmd& cmd) {
        auto& st = self->state;
        if (!st.gate.admit(cmd)) return;
        const auto& train = *st.setup->data.train;
        const auto n = static_cast<std::size_t>(
            std::max<std::int64_t>(1, std::min<std::int64_t>(cmd.batch, train.n)));
        auto b = view(train, 0, n);
        std::vector<float> scratch(st.model->param_count());
        const auto* params = st.setup->params->values.data();
        st.device->run_step(*st.model, params, b, scratch.data());  // warm-up, not timed
        // The fastest of several steps: robust to another thread stealing the core for a moment.
        // At least cmd.steps steps and 20 ms, at most 50 steps.
        double best = 1e30, spent = 0.0;
        for (int i = 0; i < 50 && (i < std::max(1, cmd.steps) || spent < 0.02); ++i) {
          stopwatch sw;
          st.device->run_step(*st.model, params, b, scratch.data());
          const double s = sw.seconds();
          best = std::min(best, s);
          spent += s;
        }
        self->send(
            job, msg::probe_done{cmd.job, cmd.generation, st.rank, best / static_cast<double>(n)});
      },
  };
}

}  // namespace troupe::actors
