#include "actors/group_supervisor.hpp"

#include <caf/exit_reason.hpp>
#include <caf/system_messages.hpp>

#include "actors/device_worker.hpp"

namespace troupe::actors {

caf::behavior group_supervisor(stateful<group_state>* self, config::group_config group,
                               caf::actor task_manager) {
  self->state.group = group;
  if (task_manager)
    self->send(task_manager, msg::register_group{group.name, group.device, group.count});
  // Edge 3.
  self->set_down_handler([=](const caf::down_msg& down) {
    auto& st = self->state;
    auto it = st.workers.find(down.source);
    if (it == st.workers.end()) return;
    const auto w = it->second;
    st.workers.erase(it);
    st.handles.erase(down.source);
    const std::string kind = is_input_failure(down.reason) ? "input" : "crash";
    self->send(w.job, msg::worker_down{w.spec.job, w.spec.epoch, w.spec.rank, kind,
                                       failure_text(self->system(), down.reason)});
  });
  return {
      // Edge 1.
      [=](const msg::spawn_worker& spec, const msg::local_ref<worker_setup>& setup) -> caf::actor {
        auto job = caf::actor_cast<caf::actor>(self->current_sender());
        auto w = spawn_detached(self, device_worker, job, spec, setup);
        self->monitor(w);
        self->state.workers[w.address()] = supervised_worker{job, spec};
        self->state.handles[w.address()] = w;
        return w;
      },
      // Edge 2.
      [=](const msg::release& r) {
        auto& st = self->state;
        for (auto it = st.workers.begin(); it != st.workers.end();) {
          if (it->second.spec.job != r.job) {
            ++it;
            continue;
          }
          auto h = st.handles[it->first];
          self->demonitor(h);
          self->send_exit(h, caf::exit_reason::user_shutdown);
          st.handles.erase(it->first);
          it = st.workers.erase(it);
        }
      },
  };
}

}  // namespace troupe::actors
