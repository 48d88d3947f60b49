#pragma once
// The job's way to RUNNING (actors/job/job.hpp edges 1, 2, 2', 3): data, model, sync mode, workers,
// and the split's weights (configured, capabilities, or a measured probe).
#include "actors/job/job_state.hpp"

namespace troupe::actors {

// Edge 1.
void on_data(job_self self, const data_bundle& bundle);
// Asks `slot`'s supervisor for the worker of device `dev`, as the next rank (a new entry of
// st.workers; the answer fills in its actor). False: the job failed (its setup is bad input).
bool spawn_worker(job_self self, const group_slot& slot, int dev);
// SPAWNING: a worker built its device and replica (and PROBING: a worker lost while the job
// started, restarted).
void on_worker_ready(job_self self, const msg::worker_ready& m);
// PROBING: edge 3 once every probe answered.
void on_probe_done(job_self self, const msg::probe_done& m);
// SPAWNING and PROBING: a worker failure its supervision policy survives (restart, migrate) is
// held, and the job starts without that worker (its failure is replayed once the job runs:
// job_membership.hpp, replay_start_failures); true when taken. The others fail the job.
bool on_start_failure(job_self self, const msg::worker_down& m);

// `troupe inject JOB SPEC` on the running job: a one-shot fault (kill, hang, drop, oom,
// device-error, partition) that fires at the next step, or at the step it names when that is
// later. "" when taken; else why not (the spec's syntax, a target the job does not have, a fault
// that only a starting worker can take).
std::string inject_fault(job_self self, const std::string& spec);

}  // namespace troupe::actors
