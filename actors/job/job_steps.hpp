#pragma once
// The job's step protocol in RUNNING and DRAINING (actors/job/job.hpp): plans, slices, gradient
// sums, the reduction through the sync seam, and the step boundary (the evaluation after the
// last one: actors/job/job_evaluation.hpp).
#include "actors/job/job_state.hpp"

namespace troupe::actors {

// Edges 2'/3: the split is known; start stepping.
void start_running(job_self self);
void on_step_plan(job_self self, msg::step_plan& plan, msg::local_ref<msg::index_list>& indices);
void on_step_done(job_self self, const msg::step_done& m, msg::local_ref<msg::grad_buffer>& grad);
void on_applied(job_self self, const msg::applied& m);
// sync: allreduce: a member's reduction was aborted (actors/job/job_reduce_recovery.hpp).
void on_reduce_dropped(job_self self, const msg::reduce_dropped& m);
// Every member applied the step in flight: complete it (once a checkpoint being written landed).
void step_applied(job_self self);
void on_split_decision(job_self self, const msg::split_decision& d);
// Asks the distributor for the plan of `step`.
void request_plan(job_self self, std::int64_t step);
// The step in flight was handed out and is not applied yet.
bool step_live(job_self self);
// Elastic: fewer members than min_devices. The job holds at the step boundary (logged once)
// until a restarted or new worker joins; the watchdog bounds the wait.
bool held_below_min_devices(job_self self);
// split: adaptive: a rebalancer for the job's current ranks (replacing the one it had).
void start_rebalancer(job_self self);
// At a step boundary: the next step, an evaluation at the end, or a hold.
void next_step(job_self self);

}  // namespace troupe::actors
