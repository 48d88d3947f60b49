#pragma once
// Elastic jobs (jobs[].elastic): devices that join while the job runs. The task manager hands
// the job a group whose agent joined (group_up_atom + the slot); each of its devices becomes a
// new rank whose worker is spawned at once and enters at the next step boundary, with a new
// generation, like a restarted worker (actors/membership.hpp edge 5), up to max_devices.
// The other direction, fewer members than min_devices, is a hold at the step boundary
// (held_below_min_devices in actors/job_steps.hpp).
#include "actors/job_state.hpp"

namespace troupe::actors {

// A group joined; before RUNNING it waits for start_running.
void on_group_joined(job_self self, const group_slot& slot);
// RUNNING begins: the groups that joined meanwhile are taken in.
void take_waiting_groups(job_self self);

}  // namespace troupe::actors
