#pragma once
// Job admission and placement (DESIGN §7 "scheduling"): which queued jobs start now, and on
// which resource groups. A pure function of a snapshot; the task manager applies its answer.
//
// A job names the groups it may use (`resources`; all groups when empty) and holds every device
// it is given exclusively until it ends. Placement (two-level scheduling: job -> groups here,
// group -> devices inside the group):
//   uniform         spread the job evenly over every named group: it takes every free device of
//                   each, and waits until each has at least one free device.
//   resource-state  the job goes to the ONE named group with the largest free resource (free
//                   devices x per-device weight; ties to the earlier group), taking its free
//                   devices, and waits only while none of its groups has a free device.
//
// Admission: queued jobs in priority order (higher first, then submission order). A job whose
// dependency (`after:`) failed or was cancelled is cancelled; one whose dependencies have not all
// completed waits without holding anything. A job that waits for resources reserves its groups:
// later, lower-priority jobs may start only on groups no waiting higher-priority job needs
// (conservative backfill, so a big high-priority job is not starved by a stream of small ones).
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace troupe::policies {

struct group_capacity {
  std::string name;
  int free = 0;         // devices not held by any job
  int total = 0;
  double weight = 1.0;  // relative compute per device
};

struct queued_job {
  std::string name;
  int priority = 0;
  std::int64_t seq = 0;  // submission order
  std::vector<std::string> after;
  std::vector<std::string> groups;  // the groups it may use; empty = all
  std::string placement = "uniform";
};

// Outcome of a job known to the scheduler: queued | running | completed | failed | cancelled.
using job_outcomes = std::map<std::string, std::string>;

struct start_decision {
  std::string job;
  std::vector<std::pair<std::string, int>> take;  // group name -> devices, in rank order
};

struct admission {
  std::vector<start_decision> start;  // in the order they should start
  std::vector<std::string> cancel;    // a dependency failed or was cancelled
};

// Where `job` would go with `groups` as they are, ignoring reservations; empty when it must wait.
std::vector<std::pair<std::string, int>> place(const queued_job& job,
                                               const std::vector<group_capacity>& groups);

// One scheduling pass over the queue. Throws troupe::input_error for an unknown placement or a
// group name that is not in `groups`.
admission admit(std::vector<queued_job> queue, std::vector<group_capacity> groups,
                const job_outcomes& outcomes);

}  // namespace troupe::policies
