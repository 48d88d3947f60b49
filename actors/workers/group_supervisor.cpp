#include "actors/workers/group_supervisor.hpp"

#include <chrono>

#include <caf/exit_reason.hpp>
#include <caf/system_messages.hpp>

#include "actors/workers/device_worker.hpp"

namespace troupe::actors {
namespace {

using self_ptr = stateful<group_state>*;

caf::actor spawn_one(self_ptr self, const caf::actor& job, const msg::spawn_worker& spec,
                     msg::local_ref<worker_setup> setup) {
  auto& st = self->state;
  if (st.agents) {
    // The worker finds the agent that hosts the group when it starts (a restart finds one that
    // came back); a copy, since the job's setup is shared.
    auto placed = std::make_shared<worker_setup>(*setup);
    placed->agents = st.agents;
    setup = msg::local_ref<worker_setup>{std::move(placed)};
  }
  auto w = st.factory ? st.factory(self, job, spec, setup)
                      : spawn_detached(self, device_worker, job, spec, setup);
  self->monitor(w);
  st.workers[w.address()] = supervised_worker{job, spec, setup};
  st.handles[w.address()] = w;
  return w;
}

// Seconds on the actor clock (simulated under the test coordinator).
double now_seconds(self_ptr self) {
  return std::chrono::duration<double>(self->clock().now() - self->state.t0).count();
}

// Edges 3 and 5 after the worker is gone: decide and tell the job.
// `kind` nothing: bad input, the worker cannot be built here; nothing to restart.
void on_failure(self_ptr self, const supervised_worker& w, std::optional<failure_class> kind,
                const std::string& reason) {
  auto& st = self->state;
  const group_state::key k{w.spec.job, w.spec.rank};
  msg::worker_down down;
  down.job = w.spec.job;
  down.generation = w.spec.generation;
  down.rank = w.spec.rank;
  down.kind = kind.value_or(failure_class::crash);
  down.bad_input = !kind;
  down.reason = reason;
  st.failed[k] = w;
  if (!kind) {
    down.decision = "cannot start: fail the job";
    self->send(w.job, down);
    return;
  }
  auto it = st.jitter.find(k);
  if (it == st.jitter.end())
    it =
        st.jitter
            .emplace(k, rng(w.setup->seed).fork(0x50000u + static_cast<std::uint64_t>(w.spec.rank)))
            .first;
  auto& intensity = st.intensity.try_emplace(k, w.setup->restarts).first->second;
  // The backoff grows with failures in a row that computed nothing in between (a crash loop);
  // an incarnation that trained resets it, however many faults from outside came before.
  int& loop = st.crash_loop[k];
  loop = w.setup->computed && w.setup->computed->load() > 0 ? 1 : loop + 1;
  const auto d = policies::decide(*kind, w.setup->supervision, intensity, now_seconds(self),
                                  st.backoff, it->second, loop - 1);
  down.action = d.action;
  down.decision = d.reason;
  self->send(w.job, down);
  if (d.action == policies::supervisor_action::restart) {
    self->delayed_send(self, to_timespan(d.backoff_seconds),
                       msg::restart_worker{w.spec.job, w.spec.generation, w.spec.rank});
  }
}

}  // namespace

caf::behavior group_supervisor(stateful<group_state>* self, config::group_config group) {
  return group_supervisor_with(self, std::move(group), nullptr, {});
}

caf::behavior remote_group_supervisor(stateful<group_state>* self, config::group_config group,
                                      std::shared_ptr<const agent_directory> agents) {
  self->state.agents = std::move(agents);
  return group_supervisor_with(self, std::move(group), nullptr, {});
}

caf::behavior group_supervisor_with(stateful<group_state>* self, config::group_config group,
                                    worker_factory factory, policies::backoff_params backoff) {
  self->state.group = group;
  self->state.factory = std::move(factory);
  self->state.backoff = backoff;
  self->state.t0 = self->clock().now();
  // Edge 3.
  self->set_down_handler([=](const caf::down_msg& down) {
    auto& st = self->state;
    auto it = st.workers.find(down.source);
    if (it == st.workers.end()) return;
    const auto w = it->second;
    st.workers.erase(it);
    st.handles.erase(down.source);
    const auto text = failure_text(self->system(), down.reason);
    on_failure(self, w,
               is_input_failure(down.reason)
                   ? std::nullopt
                   : std::optional<failure_class>(policies::classify_message(text)),
               text);
  });
  return {
      // Edge 1.
      [=](const msg::spawn_worker& spec, const msg::local_ref<worker_setup>& setup) -> caf::actor {
        return spawn_one(self, caf::actor_cast<caf::actor>(self->current_sender()), spec, setup);
      },
      // Edge 4.
      [=](const msg::restart_worker& r) {
        auto& st = self->state;
        auto it = st.failed.find({r.job, r.rank});
        if (it == st.failed.end()) return;  // released meanwhile, or restarted already
        auto w = std::move(it->second);
        st.failed.erase(it);
        auto setup = std::make_shared<worker_setup>(*w.setup);
        setup->cancel = std::make_shared<cancel_token>();
        setup->computed = std::make_shared<std::atomic<std::int64_t>>(0);
        spawn_one(self, w.job, w.spec, msg::local_ref<worker_setup>{std::move(setup)});
      },
      // Edge 5.
      [=](const msg::worker_failed& f) {
        auto& st = self->state;
        for (auto it = st.workers.begin(); it != st.workers.end(); ++it) {
          if (it->second.spec.job != f.job || it->second.spec.rank != f.rank) continue;
          const auto w = it->second;
          auto h = st.handles[it->first];
          st.handles.erase(it->first);
          st.workers.erase(it);
          w.setup->cancel->cancel();
          self->demonitor(h);
          self->send_exit(h, caf::exit_reason::kill);
          on_failure(self, w, f.kind, f.reason);
          return;
        }
      },
      // Edge 2.
      [=](const msg::release& r) {
        auto& st = self->state;
        for (auto it = st.failed.begin(); it != st.failed.end();)
          it = it->first.first == r.job ? st.failed.erase(it) : std::next(it);
        for (auto it = st.intensity.begin(); it != st.intensity.end();)
          it = it->first.first == r.job ? st.intensity.erase(it) : std::next(it);
        for (auto it = st.jitter.begin(); it != st.jitter.end();)
          it = it->first.first == r.job ? st.jitter.erase(it) : std::next(it);
        for (auto it = st.workers.begin(); it != st.workers.end();) {
          if (it->second.spec.job != r.job) {
            ++it;
            continue;
          }
          auto h = st.handles[it->first];
          it->second.setup->cancel->cancel();  // a hung worker's thread must wake to exit
          self->demonitor(h);
          self->send_exit(h, caf::exit_reason::user_shutdown);
          st.handles.erase(it->first);
          it = st.workers.erase(it);
        }
      },
  };
}

}  // namespace troupe::actors
