#pragma once
// A job's report (actors/common/report.hpp) from its state: progress, losses, parameters, workers,
// and the sections the fault, sync and checkpoint parts of the job fill in.
#include <string>

#include "actors/common/report.hpp"
#include "actors/job/job_state.hpp"

namespace troupe::actors {

// `status` is completed | cancelled | failed; a failed job reports no parameters (it may have
// stopped mid-reduce, with the shards still writing).
job_report make_report(stateful<job_state>* self, job_status status);

}  // namespace troupe::actors
