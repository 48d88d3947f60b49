#pragma once
// Job scheduling on resource groups: placement, LPT makespan assignment, admission and
// dependency cycles.
//
// Placement of a job's demand (devices) on groups, uniform or by resource
// state:
//   uniform        - spread the demand as evenly as possible over every eligible group with free
//                    devices (water-filling: a group with fewer free devices than the even share
//                    gives all it has, the rest is re-spread; the final remainder goes to the
//                    groups with the most free devices). Maximises parallel data loading and
//                    keeps every group's load alike.
//   resource-state - largest free group first: fill the group with the most free devices, then
//                    the next (ties: faster group, then the given order). Keeps a job in as few
//                    groups as possible, so more of its allreduce stays on the fast intra-group
//                    path.
// A placement exists only when the eligible groups have at least `demand` free devices.
//
// LPT (Graham, "Bounds on Multiprocessing Timing Anomalies", SIAM J. Appl. Math. 1969): sort
// jobs by duration, longest first, and give each to the machine where it finishes earliest.
// On m identical machines LPT <= (4/3 - 1/(3m)) OPT. Lower bounds on OPT for identical machines:
//   OPT >= max( sum p / m,  p_1,  p_m + p_{m+1} )   (p sorted descending; the last term because
// two of the m+1 longest jobs share a machine).
//
// Admission: which pending jobs start now. Jobs are taken by priority (higher first), FIFO
// within a priority (the order of the pending list). A job whose `after` jobs have not all
// completed waits and holds nothing back. A job that cannot be placed now waits for resources;
// without backfill it also holds back every job after it in that order (so a large
// high-priority job is not starved by a stream of small ones); a job whose demand exceeds what
// its groups could ever offer is reported infeasible and holds nothing back. A dependency
// cycle among pending jobs, or a dependency on an unknown job, is an input error.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/kinds.hpp"

namespace troupe::policies {

struct group_state {
  std::string name;
  int free = 0;        // devices free now
  int capacity = 0;    // devices in the group (free <= capacity)
  double speed = 1.0;  // relative compute per device
};

struct placement_entry {
  std::string group;
  int devices = 0;
  bool operator==(const placement_entry& o) const {
    return group == o.group && devices == o.devices;
  }
};
using placement = std::vector<placement_entry>;  // in the order of the groups given

// placement_kind and its config names are in core/kinds.hpp.
using troupe::placement_kind;

// `allowed` empty: every group. Unknown allowed names throw troupe::input_error.
std::optional<placement> place_uniform(const std::vector<group_state>& groups, int demand,
                                       const std::vector<std::string>& allowed = {});
std::optional<placement> place_resource_state(const std::vector<group_state>& groups, int demand,
                                              const std::vector<std::string>& allowed = {});
std::optional<placement> place(placement_kind kind, const std::vector<group_state>& groups,
                               int demand, const std::vector<std::string>& allowed = {});

struct lpt_result {
  std::vector<std::size_t> machine_of;  // per job
  std::vector<double> finish;           // per machine
  double makespan = 0.0;
};
// Jobs with durations (on a speed-1 machine) onto machines with speeds (job j on machine k takes
// durations[j] / speeds[k]); LPT order, earliest-finish machine, ties to the lower index.
lpt_result lpt_schedule(const std::vector<double>& durations, const std::vector<double>& speeds);
// The identical-machines lower bound above.
double makespan_lower_bound(const std::vector<double>& durations, std::size_t machines);

struct job_request {
  std::string name;
  int priority = 0;
  int demand = 1;                      // devices
  std::vector<std::string> after;      // jobs that must complete first
  std::vector<std::string> resources;  // allowed groups; empty = all
  placement_kind kind = placement_kind::uniform;
};

// A cycle among the jobs' `after` edges as a closed path [a, b, ..., a] (a waits for b ...), or
// nullopt. Dependencies on names outside `jobs` are ignored here.
std::optional<std::vector<std::string>> find_dependency_cycle(const std::vector<job_request>& jobs);

struct admission_options {
  bool backfill = false;  // let later jobs start around one that does not fit
};

struct admitted_job {
  std::string job;
  placement where;
};

struct admission_result {
  std::vector<admitted_job> start;        // in admission order
  std::vector<std::string> waiting_deps;  // some `after` job not completed
  std::vector<std::string> waiting_resources;
  std::vector<std::string> infeasible;  // demand > capacity of its groups
};

// pending: jobs not yet started, in submission order. completed / running: names of jobs
// finished / in progress (dependencies may name those). Throws troupe::input_error on duplicate
// pending names, unknown dependencies or a dependency cycle (the message shows the cycle).
admission_result admit(const std::vector<job_request>& pending,
                       const std::vector<group_state>& groups,
                       const std::set<std::string>& completed,
                       const std::set<std::string>& running = {},
                       const admission_options& options = {});

}  // namespace troupe::policies
