#pragma once
// The messages between agents and the control process (over CAF's middleman): joining a run
// and hosting a worker's device. Part of the one protocol of actors/common/messages.hpp, which
// lists them in the type-id block; they live here to keep that file readable.
#include <cstdint>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/meta/type_name.hpp>

#include "core/kinds.hpp"
#include "devices/device.hpp"
#include "models/model.hpp"
#include "models/optimizer.hpp"

namespace troupe::models {

// The optimizer spec travels inside host_worker (found by argument-dependent lookup).
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, optimizer_spec& x) {
  return f(caf::meta::type_name("troupe.optimizer_spec"), x.kind, x.lr, x.momentum, x.nesterov,
           x.beta1, x.beta2, x.eps, x.weight_decay);
}

// The model spec too: the agent builds the same model the control process would.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, model_spec& x) {
  return f(caf::meta::type_name("troupe.model_spec"), x.kind, x.input_shape, x.classes, x.hidden,
           x.conv_layers, x.kernel);
}

}  // namespace troupe::models

namespace troupe::devices {

// And the device spec: the agent builds the device the control process would have. All but
// share_group, which names a gate in the control process; a hosted device's share comes with
// each call instead (remote_wire's request_head).
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, device_spec& x) {
  return f(caf::meta::type_name("troupe.device_spec"), x.kind, x.name, x.threads, x.base,
           x.slowdown, x.row_seconds, x.ordinal, x.layer_split);
}

}  // namespace troupe::devices

namespace troupe::msg {

// agent -> agent_registry (a request): join with one resource group. `version` is the
// agent's Troupe version: the registry refuses any other, since both sides must share this
// protocol's types.
struct agent_hello {
  std::string version;
  std::string name;   // the agent's id (unique among joined agents)
  std::string group;  // the resource group it hosts (unique among joined agents)
  device_kind device = device_kind::cpu;
  std::int32_t count = 1;    // devices in the group
  std::int32_t threads = 1;  // BLAS threads per device
  std::string host;
  std::int64_t pid = 0;
  std::string
      ticket;  // the one-time ticket the join endpoint gave (actors/agents/join_tickets.hpp)
};

// agent_registry -> agent: the answer to agent_hello. Refused: `reason` says why (the agent
// exits with it, since trying again cannot help).
struct agent_answer {
  bool accepted = false;
  std::string reason;
  std::int64_t member = 0;  // accepted: this join's number, counting from 1 per registry
};

// control process (a worker's remote device) -> agent: compute for this worker on a device of
// the agent's group. The agent builds the device and the model from these specs, answers
// host_answer to the sender and then serves the worker's steps over a data-plane link that
// both sides set up through the run's rendezvous store under `prefix`
// (actors/agents/remote_device.hpp).
struct host_worker {
  std::string prefix;        // the rendezvous keys of this worker incarnation's link
  caf::actor store;          // the run's rendezvous store (collectives/store_actor.hpp)
  std::string control_host;  // the control process's host name: the same as the agent's, ipc
  devices::device_spec device;
  models::model_spec model;
  // For a worker whose replica lives in the agent.
  models::optimizer_spec optimizer;
  std::string codec;  // sync.codec of the process ring ("" for none)
};

// agent -> the sender of host_worker. Refused: `reason` says why (the worker fails to start).
struct host_answer {
  bool accepted = false;
  std::string reason;
  double capability = 1.0;  // the device's, as devices::device::capability()
  std::string data_host;    // the interface the agent binds its end of the link on
};

#define TROUPE_INSPECT(type, ...)                                  \
  template <class Inspector>                                       \
  typename Inspector::result_type inspect(Inspector& f, type& x) { \
    return f(caf::meta::type_name("troupe." #type), __VA_ARGS__);  \
  }

TROUPE_INSPECT(agent_hello, x.version, x.name, x.group, x.device, x.count, x.threads, x.host, x.pid,
               x.ticket)
TROUPE_INSPECT(agent_answer, x.accepted, x.reason, x.member)
TROUPE_INSPECT(host_worker, x.prefix, x.store, x.control_host, x.device, x.model, x.optimizer,
               x.codec)
TROUPE_INSPECT(host_answer, x.accepted, x.reason, x.capability, x.data_host)

#undef TROUPE_INSPECT

// An agent leaving gracefully (drain, SIGTERM) asks, through the registry and the task manager,
// that its group's jobs let it go at their next step boundary (group_leave_atom). Each waits
// this long for its jobs; a job that does not reach a boundary in time loses the group when
// the agent goes. The registry waits 5 s more, a stopping agent 10 s more, so that every
// deadline expires inside the one that waits on it.
inline constexpr double group_leave_seconds = 15.0;

}  // namespace troupe::msg
