#pragma once
// `sync: allreduce` losing a member at any point of a step, with the replicated optimizer.
//
// While the step computes, in one process, the survivors compute the lost member's slices and
// contribute them at the reduction (actors/sync/job_sync.hpp, regroup). Two cases are not that one:
//
// - A member lost while the members reduce. The job opens a new generation, which aborts the
//   reduction, and waits until every surviving member said `applied` or `reduce_dropped`. A
//   member that applied got the whole step's mean (the reduction completes for nobody unless
//   every member's part is in), so the step is done: every member that dropped takes that
//   member's replica (parameters and optimizer state) and the step completes. When nobody
//   applied, every replica is as it was before the step, and the step runs again over the
//   survivors with the same samples.
// - A member lost while the step computes in a process ring (replicas in agents): the agents
//   hold their gradients, so the survivors cannot contribute the lost member's slices; the
//   step runs again over the survivors.
//
// Either way no step is lost and every sample of the step is trained once. A step run again
// differs from the fault-free run only in how its sums are grouped (float rounding).
#include <string>

#include "actors/job/job_state.hpp"

namespace troupe::actors {

// The reduction of the step in flight went to every member: each is waiting to be heard from.
void reduce_answers_begin(job_self self);
// A member's `applied` or `reduce_dropped` of the step in flight (the job checked job, step and
// generation). True when the job is recovering (it then decides once every member answered).
bool reduce_answer_while_recovering(job_self self, std::int32_t rank, reduce_answer a);
// A member was lost while the members reduce (its failure is handled: a new generation is open).
void reduce_recovery_begin(job_self self, std::int32_t rank);
// A member dropped the reduction while no member was lost (its reduction failed on its side
// alone): a new generation aborts the reduction for the others, and the job recovers as above.
void reduce_recovery_on_drop(job_self self, std::int32_t rank);
// The reduction of the step in flight went out: arm its deadline (replica modes), 4 x the 95th
// percentile of the last reductions, at least the step deadline and 1 s (job_state's
// reduce_deadline, the step deadline's policy over reduction times). A member stuck behind
// a peer nobody reports lost (an agent's ring waiting for a cut-off agent whose own worker is
// idle) must not hold the job until its watchdog.
void arm_reduce_deadline(job_self self);
// The deadline of reduction `seq` passed: if that reduction still waits, it is aborted with a
// new generation and the job recovers from the members' answers, blaming no one. Recovery has a
// deadline of its own (armed when it begins): a member that still has not answered then is
// declared hung, and the job decides without it.
void reduce_deadline_passed(job_self self, std::int64_t seq);
// The step's reduction completed in `seconds` (its deadline's measure).
void reduce_completed(job_self self, double seconds);
// The step in flight runs again over the current members, from a new plan; `why` is logged.
void rerun_step(job_self self, const std::string& why);

}  // namespace troupe::actors
