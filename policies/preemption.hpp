#pragma once
// Preemption: which running jobs to pause so that a waiting job of higher priority can start.
//
// A queued job that cannot be placed may take the devices of running jobs that declared
// themselves `preemptible`, have a strictly lower priority and hold devices of a group the waiting
// job may use. They are taken greedily, lowest priority first and, among equal priorities, the
// most recently submitted first (it has the least work to lose), until the waiting job fits.
// Nothing is chosen unless it fits then: pausing a job that does not make room would only slow
// the cluster down. Jobs already being paused count as gone, so a job that waits for them to
// reach their checkpoint does not pause more.
//
// Gavel (OSDI 2020), Pollux (OSDI 2021) and Sia (SOSP 2023) preempt at checkpoint boundaries
// in the same spirit; their policies also weigh goodput, this one only priority.
#include <cstdint>
#include <string>
#include <vector>

#include "policies/scheduling.hpp"

namespace troupe::policies {

struct preemption_candidate {
  std::string job;
  int priority = 0;
  std::int64_t seq = 0;  // submission order: higher is newer
  bool preemptible = false;
  bool pausing = false;  // already being paused (its devices free soon)
  placement held;        // the devices it holds, by group (shared groups left out)
};

// `groups`: the devices free now. Returns the jobs to pause, in the order chosen; empty when
// `waiting` fits already, fits once the jobs being paused are gone, or cannot fit at all.
std::vector<std::string> preemption_victims(const job_request& waiting,
                                            std::vector<group_state> groups,
                                            std::vector<preemption_candidate> running);

}  // namespace troupe::policies
