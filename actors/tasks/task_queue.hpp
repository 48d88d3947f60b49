#pragma once
// The task manager's reading of its queue (actors/tasks/task_manager.hpp), as functions of its
// state: the devices each group offers now, a queued job as an admission request, why each queued
// job still waits (for `troupe status`), which preemptible jobs to pause (edge 7), and the jobs
// view of runtime::jobs(). The task manager acts on what they return.
#include <string>
#include <vector>

#include "actors/tasks/task_manager.hpp"
#include "policies/scheduling.hpp"

namespace troupe::actors {

// The devices a job asks for: every device of the groups it names (all groups when it names
// none). The config has no smaller device count yet; policies::admit takes any demand.
int demand_of(const tm_state& st, const config::job_config& cfg);

// A group is present when it computes here or its agent has joined.
bool group_present(const tm_state& st, const config::group_config& g);

// The groups as the admission policy sees them: free devices now (none in a group whose agent
// is absent, when the task manager holds jobs for their agents).
std::vector<policies::group_state> group_states(const tm_state& st);

policies::job_request request_of(const tm_state& st, const queued_entry& q);

// Edge 7: for each job waiting for devices, highest priority first, the running jobs to pause
// for it (policies/preemption.hpp).
struct preemption {
  msg::job_id victim = 0;
  std::string waiting;
};
std::vector<preemption> preemptions(const tm_state& st,
                                    const std::vector<std::string>& waiting_resources);

// Why each queued job still waits, after an admission pass: into st.waiting.
void note_waiting(tm_state& st, const policies::admission_result& adm);

// Queued jobs in the order they would start, then running ones, then ended ones.
jobs_view view_of(const tm_state& st);

}  // namespace troupe::actors
