#include "actors/job/job_reduce_recovery.hpp"

#include <algorithm>
#include <limits>
#include <optional>

#include "actors/job/job_membership.hpp"
#include "actors/job/job_messages.hpp"
#include "actors/job/job_steps.hpp"

namespace troupe::actors {
namespace {

std::string step_text(job_self self) {
  return "step " + std::to_string(self->state.step);
}

// Every surviving member answered: the sync mode makes the replicas one, and the step is done,
// runs again, or (local) runs its average again.
void decide(job_self self) {
  auto& st = self->state;
  for (auto a : st.reduce_answers)
    if (a == reduce_answer::waiting) return;
  st.reduce_recovering = false;
  const auto r = st.sync->after_lost_reduction(st.reduce_answers, st.step);
  using next = reduction_recovery::action;
  if (r.next == next::rerun_step) {
    rerun_step(self, step_text(self) + ": no member applied the aborted reduction");
    return;
  }
  if (r.next == next::rerun_average) {
    log(self, step_text(self) +
                  ": no member completed the aborted average; it runs again over the members");
    auto cmd = tagged<msg::local_cmd>(self);
    cmd.step = st.step;
    std::vector<caf::actor> actors;
    for (const auto& w : st.workers) actors.push_back(w.actor);
    st.reduce_generation = st.gate.generation();
    st.pending_applied = st.sync->rerun_average(self, cmd, actors);
    reduce_answers_begin(self);
    arm_reduce_deadline(self);
    return;
  }
  const auto from = static_cast<std::size_t>(r.from);
  if (r.from >= 0 && from < st.workers.size())
    log(self,
        step_text(self) + ": " + st.workers[from].name +
            " applied the reduction before it was aborted; " +
            (r.copied > 0 ? std::to_string(r.copied) + " member(s) that had not take its replica"
                          : std::string("so did every other survivor")));
  else
    log(self, step_text(self) + ": the survivors applied it");
  st.pending_applied = 0;
  // |G_B|^2 comes from member 0, which may be the one lost: a recovered step gives the noise
  // scale no point.
  if (st.sync->grad_norm_from_applied()) st.step_grad_sq = std::numeric_limits<double>::quiet_NaN();
  step_applied(self);
}

// A reduction no loss explains is stuck or broken: a new generation aborts it for everyone, and
// the job recovers from the members' answers as for a loss, blaming no one.
void abort_and_recover(job_self self, const std::string& why) {
  auto& st = self->state;
  log(self, step_text(self) + ": " + why +
                "; it is aborted, and the members say whether they applied it");
  st.reduce_recovering = true;
  change_membership(self);
  decide(self);
  if (st.reduce_recovering) arm_reduce_deadline(self);
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
                  ": a member was lost while the members reduce and apply; the reduction is "
                  "aborted, waiting for the others to say whether they applied it");
  st.reduce_recovering = true;
  decide(self);
  if (st.reduce_recovering) arm_reduce_deadline(self);
}

void reduce_recovery_on_drop(job_self self, std::int32_t rank) {
  auto& st = self->state;
  if (!st.sync->recovers_lost_reduction()) return;
  const auto r = static_cast<std::size_t>(rank);
  abort_and_recover(self, (r < st.workers.size() ? st.workers[r].name : std::string("a member")) +
                              " dropped the reduction with no member lost");
}

void arm_reduce_deadline(job_self self) {
  auto& st = self->state;
  if (!st.sync->recovers_lost_reduction()) return;
  auto t = tagged<msg::step_timeout>(self);
  t.step = st.step;
  t.seq = ++st.reduce_deadline_seq;
  t.reducing = true;
  const double seconds = std::max(st.mem.deadline_seconds(), st.reduce_deadline.deadline());
  self->delayed_send(self, to_timespan(seconds), t);
}

void reduce_deadline_passed(job_self self, std::int64_t seq) {
  auto& st = self->state;
  if (seq != st.reduce_deadline_seq || st.pending_applied <= 0) return;
  if (!st.reduce_recovering) {
    abort_and_recover(self, "the reduction did not complete within its deadline");
    return;
  }
  // The reduction was aborted, and a member has still not said whether it applied it: without
  // this deadline the job would wait for it forever. It is hung; its loss (worker_down) lets the
  // job decide over the others.
  for (std::size_t r = 0; r < st.reduce_answers.size(); ++r)
    if (st.reduce_answers[r] == reduce_answer::waiting)
      declare_failed(
          self, r, failure_class::hang,
          "no answer to the aborted reduction of " + step_text(self) + " within its deadline");
  arm_reduce_deadline(self);
}

void reduce_completed(job_self self, double seconds) {
  self->state.reduce_deadline.observe(seconds);
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
