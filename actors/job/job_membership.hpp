#pragma once
// The job actor's side of membership (actors/job/membership.hpp holds the rules): it turns the
// plain class's commands into messages, and its events out of messages.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/job/job_state.hpp"

namespace troupe::actors {

// Who a new generation is made of: the members, and whose replica lives in an agent.
generation_members generation_of(job_self self);
// Whether any rank is a member now (none while every rank is lost or restarting at once).
bool any_member(job_self self);
// Edge 2'/3: the workers are known.
void membership_start(job_self self);
// Arms the step deadline of the latest dispatch of the step in flight.
// Arms the step deadline of the latest dispatch: after `seconds`, or the membership's deadline.
void arm_deadline(job_self self, std::optional<double> seconds = std::nullopt);
// A step_done: true when it is the current incarnation's answer to a slice it owes (stored).
bool accept_result(job_self self, const msg::step_done& m,
                   const std::shared_ptr<const std::vector<float>>& grad);
// The reason a worker failure fails the job where it cannot be handled (outside RUNNING and
// DRAINING); nothing for a message of another job or an unknown rank.
std::optional<std::string> unhandled_failure(job_self self, const msg::worker_down& m);
// RUNNING and DRAINING: returns the reason to fail the job, if the failure cannot be handled.
std::optional<std::string> on_worker_down(job_self self, const msg::worker_down& m);
void on_step_timeout(job_self self, const msg::step_timeout& t);
// Worker `rank` gave no answer in time (a hang): its supervisor stops it and decides, and the
// job hears of it as of any failure (worker_down).
void declare_failed(job_self self, std::size_t rank, failure_class kind, const std::string& reason);
// A restarted incarnation's worker_ready, sent by `from`; false when it is not one.
bool on_restarted_ready(job_self self, const msg::worker_ready& m, const caf::actor& from);
// Edge 3, once the membership exists: the failures held while the job started go through
// on_worker_down, their restarted incarnations' ready messages through on_restarted_ready.
// Returns the reason to fail the job, if one cannot be handled.
std::optional<std::string> replay_start_failures(job_self self);
// At a step boundary: restarted workers become members. True when the membership changed (the
// plan of the step was requested again).
bool join_at_boundary(job_self self);
// A new generation: the sync mode and the distributor follow it, the prefetched plan (split over
// the old members) is void, and the plan the job waits for is asked again with the new split.
void change_membership(job_self self);

}  // namespace troupe::actors
