#pragma once
// Test support for the actors' unit tests (not installed): an actor system on CAF's
// deterministic scheduler, with the protocol's message types registered, and a small job to give
// the actors under test. Nothing runs until a test calls sched.run(); time is simulated
// (sched.advance_time), so no test sleeps.
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include <cstdint>
#include <string>

#include "actors/common/caf_compat.hpp"
#include "core/config_load.hpp"

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

// A job's actor under test on the deterministic scheduler: `job_actor` stands in for the job
// (what the actor sends it comes back there), and `actor` is stopped when the test ends.
struct job_stand_in : deterministic_system {
  caf::scoped_actor job_actor{sys, true};
  caf::actor actor;

  ~job_stand_in() {
    if (!actor) return;
    caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
    sched.run();
  }
};

// One job, a small MLP on synthetic blobs over `cpus` cpu devices: enough for an actor's test to
// plan and compute real steps, and quick to load.
inline config::job_config small_mlp_job(const std::string& name, int cpus, int samples,
                                        std::int64_t batch) {
  std::string yaml = "cluster:\n  groups:\n";
  yaml += "    - {name: cpu, device: cpu, count: " + std::to_string(cpus) + "}\n";
  yaml += "jobs:\n";
  yaml += "  - name: " + name + "\n";
  yaml += "    model: {kind: mlp, hidden: [8]}\n";
  yaml += "    data: {dataset: synthetic, synthetic: {kind: blobs, samples: " +
          std::to_string(samples) + "}}\n";
  yaml += "    optimizer: {kind: sgd, lr: 0.1}\n";
  yaml += "    batch: " + std::to_string(batch) + "\n";
  yaml += "    seed: 5\n";
  return config::parse_config(yaml, name + ".yaml").jobs.at(0);
}

}  // namespace troupe::actors::testing
