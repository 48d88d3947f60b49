#pragma once
// The job's last phase (EVALUATING, actors/job/job.hpp): each member evaluates its share of the
// test set with the final parameters. A member lost then (its agent killed, stopped past the
// heartbeat or cut off as the run ends) hands its share to another member: the model is
// trained, and a lost evaluation share is no reason to fail the job.
#include <optional>
#include <string>

#include "actors/job/job_state.hpp"

namespace troupe::actors {

// Edge 4: the shares of the test set to the members.
void evaluate(job_self self);
void on_eval_done(job_self self, const msg::eval_done& m);
// A worker lost while the job evaluates: its unanswered shares go to another member. Why the
// job fails, when no member is left to take them.
std::optional<std::string> on_eval_worker_down(job_self self, const msg::worker_down& m);

}  // namespace troupe::actors
