#include "actors/job_reduce_recovery.hpp"

#include <optional>

#include "actors/job_messages.hpp"
#include "actors/job_steps.hpp"

namespace troupe::actors {
namespace {

std::string step_text(job_self self) {
  return "step " + std::to_string(self->state.step);
}

// Every surviving member answered: the step is done (a member applied) or runs again.
void decide(job_self self) {
  auto& st = self->state;
  const auto& answers = st.reduce_answers;
  std::optional<std::size_t> from;  // a member that applied; a rank lost after applying will do
  for (std::size_t r = 0; r < answers.size(); ++r) {
    if (answers[r] == reduce_answer::waiting) return;
    if (answers[r] == reduce_answer::applied &&
        (!from || (st.mem.is_member(r) && !st.mem.is_member(*from))))
      from = r;
  }
  st.reduce_recovering = false;
  if (!from) {
    rerun_step(self, step_text(self) + ": no member applied the aborted reduction");
    return;
  }
  int copied = 0;
  for (std::size_t r = 0; r < answers.size(); ++r)
    if (answers[r] == reduce_answer::dropped && st.sync->bring_up_to_date(r, *from)) ++copied;
  log(self, step_text(self) + ": " + st.workers[*from].name +
                " applied the reduction before it was aborted; " +
                (copied > 0 ? std::to_string(copied) + " member(s) that had not take its replica"
                            : std::string("so did every other survivor")));
  st.pending_applied = 0;
  step_applied(self);
}

}  // namespace

void reduce_answers_begin(job_self self) {
  auto& st = self->state;
  st.reduce_recovering = false;
  st.reduce_answers.assign(st.workers.size(), reduce_answer::none);
  if (!st.sync->recovers_lost_reduction()) return;
  for (std::size_t r = 0; r < st.workers.size(); ++r)
    if (st.mem.is_member(r)) st.reduce_answers[r] = reduce_answer::waiting;
}

bool reduce_answer_while_recovering(job_self self, std::int32_t rank, reduce_answer a) {
  auto& st = self->state;
  const auto r = static_cast<std::size_t>(rank);
  if (rank >= 0 && r < st.reduce_answers.size() && st.reduce_answers[r] == reduce_answer::waiting)
    st.reduce_answers[r] = a;
  if (!st.reduce_recovering) return false;
  decide(self);
  return true;
}

void reduce_recovery_begin(job_self self, std::int32_t rank) {
  auto& st = self->state;
  const auto r = static_cast<std::size_t>(rank);
  if (rank >= 0 && r < st.reduce_answers.size() && st.reduce_answers[r] == reduce_answer::waiting)
    st.reduce_answers[r] = reduce_answer::lost;
  if (!st.reduce_recovering)
    log(self, step_text(self) +
                  ": a member was lost while the members reduce; the reduction is "
                  "aborted, waiting for the others to say whether they applied it");
  st.reduce_recovering = true;
  decide(self);
}

void rerun_step(job_self self, const std::string& why) {
  auto& st = self->state;
  log(self, why + "; " + step_text(self) + " runs again over the members");
  // What the first run counted reached no model: the run again counts it.
  const auto samples = st.stats.step_samples();
  for (std::size_t r = 0; r < st.workers.size() && r < samples.size(); ++r)
    if (samples[r] > 0) {
      st.workers[r].samples -= samples[r];
      st.workers[r].steps -= 1;
    }
  st.pending_applied = 0;
  st.reduce_recovering = false;
  st.reduce_answers.clear();
  st.mem.abandon_step();
  st.grads.assign(st.workers.size(), nullptr);
  st.next_plan.reset();
  request_plan(self, st.step);
}

}  // namespace troupe::actors
