#pragma once
// Test support for the actors' unit tests (not installed): an actor system on CAF's
// deterministic scheduler, with the protocol's message types registered. Nothing runs until a
// test calls sched.run(); time is simulated (sched.advance_time), so no test sleeps.
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include "actors/common/caf_compat.hpp"

namespace troupe::actors::testing {

struct deterministic_system {
  caf::actor_system_config cfg;
  caf::actor_system sys;
  caf::scheduler::test_coordinator& sched;

  deterministic_system()
      : sys(prepare(cfg)),
        sched(dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler())) {}

 private:
  static caf::actor_system_config& prepare(caf::actor_system_config& c) {
    register_types(c);
    use_test_scheduler(c);
    return c;
  }
};

}  // namespace troupe::actors::testing
