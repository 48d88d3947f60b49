#pragma once
// The job's membership and failure handling (issue 5, DESIGN §4 and §6): which ranks are
// members, the membership epoch, the slices of the step in flight that each rank still owes, the
// hang deadline, and the `faults` section of the report. job.cpp calls these from its handlers.
//
// The rule that loses no step: the step's gradient is a sum over sample slices, so when a member
// fails its outstanding slices (same sample indices) are re-planned over the surviving members,
// which compute them with the same parameter version; the shards then reduce every slice in
// offset order. A survivor's result computed before the failure stays valid.
//
// Per rank:  MEMBER --down(restart)--> RESTARTING --ready--> JOINING --step boundary--> MEMBER
//            MEMBER --down(migrate)--> MIGRATED (its weight is 0 from then on)
// The last member is never migrated away: the job asks its supervisor to restart it instead.
//
// Every membership change bumps the epoch: the shards and the distributor follow it, plans and
// parked slices of the old epoch are void (the next plan is requested again with the new split),
// and results are accepted only from the rank's current incarnation (by sender) and from work
// handed out since the step began (admit_since).
//
// Hang detection: each dispatch of the step in flight arms a timer of
// policies::step_deadline::deadline() (a multiple of a high percentile of recent compute phases,
// with a floor); a member still owing a slice then is reported to its supervisor as hung
// (worker_failed), or as lost-group when every member of a group of two or more is silent.
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/caf_compat.hpp"
#include "actors/fault_injection.hpp"
#include "actors/report.hpp"
#include "policies/supervision.hpp"

namespace troupe::actors {

struct job_state;
using job_self = stateful<job_state>*;

enum class member_status { member, restarting, joining, migrated };

struct slice_piece {
  std::int64_t offset = 0;  // into the step's index list
  std::int64_t count = 0;
};

struct slice_result {
  std::int32_t rank = 0;
  std::shared_ptr<const std::vector<float>> grad;
};

struct membership {
  std::vector<member_status> status;             // by rank
  std::vector<std::deque<slice_piece>> owed;     // by rank, in send order (answers come in order)
  std::vector<slice_piece> orphans;              // of a failed rank, waiting for a member
  std::map<std::int64_t, slice_result> results;  // by offset: the reduce order
  msg::local_ref<msg::index_list> indices;       // the step in flight's
  msg::epoch_id step_epoch = 1;
  msg::epoch_id reduce_epoch = 1;
  std::int64_t seq = 0;                 // dispatches of the step in flight
  bool step_failed = false;             // a failure hit the step in flight: its time is not typical
  std::vector<double> reported_at;      // by rank: when the job reported it hung (-1: not)
  std::vector<double> open_recoveries;  // detection times waiting for the next completed step
  policies::step_deadline deadline;
  std::shared_ptr<fault_plan> plan;
  fault_report report;
  int last_worker_restarts = 0;  // restarts of the last worker past its restart intensity
};

// How many times the last worker is restarted after its restart intensity escalated (there is
// nobody to migrate its share to) before the job fails.
inline constexpr int last_worker_restart_limit = 3;

// After the workers are known (sizes the per-rank state).
void membership_init(job_self self, double watchdog_seconds);
// Weights by rank with 0 for non-members.
std::vector<double> member_weights(job_self self);
bool is_member(job_self self, std::size_t rank);
// begin_step: the plan's slices are owed; arms the deadline. Sets pending_done.
void step_begun(job_self self, const msg::local_ref<msg::index_list>& indices);
// A step_done: true when it is the current incarnation's answer to a slice it owes (stored).
bool accept_result(job_self self, const msg::step_done& m,
                   const std::shared_ptr<const std::vector<float>>& grad);
// The shards were sent the reduce of the step in flight.
void reduce_sent(job_self self);
// The step in flight was applied (recovery times, lost steps).
void step_completed(job_self self);
// Returns the reason to fail the job, if the failure cannot be handled.
std::optional<std::string> on_worker_down(job_self self, const msg::worker_down& m);
void on_step_timeout(job_self self, const msg::step_timeout& t);
// A restarted incarnation's worker_ready; false when it is not one (the ordinary start-up path).
bool on_restarted_ready(job_self self, const msg::worker_ready& m);
// At a step boundary: restarted workers become members. True when the membership changed (the
// plan of the step was requested again).
bool join_at_boundary(job_self self);
// The report's faults section.
fault_report fault_summary(job_self self);

}  // namespace troupe::actors
