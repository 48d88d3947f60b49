#pragma once
// The job's side of the leave-out trial (policies/leave_out.hpp holds the rule): started with
// the run where the sync mode lets a member leave the steps and come back, fed every completed
// step, carried out at step boundaries, abandoned on a failure, and reported.
#include "actors/common/report.hpp"
#include "actors/job/job_state.hpp"

namespace troupe::actors {

// RUNNING begins (after the first generation opened): a trial when the job qualifies (split:
// adaptive, data.leave_out, a mode that survives a member's loss and is not local, not
// deterministic, two or more workers, and steps enough for both windows).
void leave_out_start(job_self self);
// Step st.step completed in `step_s`: feeds the trial; its verdict goes to the log once.
void leave_out_step(job_self self, double step_s);
// At a step boundary: what the trial asked for. True when members were set aside (the
// membership changed; the plan of the step was asked again). Members brought back become
// JOINING, and join_at_boundary takes them in.
bool leave_out_at_boundary(job_self self);
// A worker failed: a trial in progress ends, and the members it set aside come back (they join
// at the next boundary, or at once when nobody else is left).
void leave_out_abandon(job_self self);
// The report's leave_out, when the trial reached a verdict.
void leave_out_report(const job_state& st, job_report& r);

}  // namespace troupe::actors
