#pragma once
// Elastic jobs (jobs[].elastic): devices that join while the job runs. The task manager hands
// the job a group whose agent joined (group_up_atom + the slot); each of its devices becomes a
// new rank whose worker is spawned at once and enters at the next step boundary, with a new
// generation, like a restarted worker (actors/job/membership.hpp edge 5), up to max_devices.
// The other direction, fewer members than min_devices, is a hold at the step boundary
// (held_below_min_devices in actors/job/job_steps.hpp).
//
// Leaving (any job, elastic or not): an agent that drains (`troupe drain AGENT`) or stops on
// SIGTERM asks, through the task manager, that its group leave. The job answers at its next
// step boundary where a checkpoint could be taken (in `sync: local`, right after an average):
// the group's ranks leave the membership (not a failure, nothing owed, nothing computed again),
// its supervisor releases their workers, a new generation re-plans the next step over the
// others, and the answer (true) lets the agent go. The job answers false at once where it
// cannot: not running yet or any more, or no member would be left; the agent is then lost as
// before, and the job's supervision policy handles it.
#include <string>

#include "actors/job/job_state.hpp"

namespace troupe::actors {

// A group joined; before RUNNING it waits for start_running.
void on_group_joined(job_self self, const group_slot& slot);
// RUNNING begins: the groups that joined meanwhile are taken in.
void take_waiting_groups(job_self self);

// (group_leave_atom, group): the answer, now or at the next step boundary.
caf::result<bool> on_group_leave(job_self self, const std::string& group);
// At a step boundary: the groups asked to leave do. True when the membership changed (the plan
// of this step is then asked again).
bool groups_leave_at_boundary(job_self self);
// The job ends: every leave still waiting is answered (its workers are released with the job).
void answer_group_leaves(job_self self);

}  // namespace troupe::actors
