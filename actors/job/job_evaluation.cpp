#include "actors/job/job_evaluation.hpp"

#include "actors/job/job_messages.hpp"
#include "data/split.hpp"

namespace troupe::actors {
namespace {

void send_share(job_self self, std::size_t rank, const eval_share& share) {
  auto& st = self->state;
  auto cmd = tagged<msg::eval_cmd>(self);
  cmd.version = st.step;
  cmd.rank = static_cast<std::int32_t>(rank);
  cmd.offset = share.offset;
  cmd.count = share.count;
  st.eval_owed[rank].push_back(share);
  self->send(st.workers[rank].actor, cmd);
}

}  // namespace

void evaluate(job_self self) {
  auto& st = self->state;
  enter(self, job_phase::evaluating);
  const auto n = static_cast<std::int64_t>(st.data.test ? st.data.test->n : 0);
  if (n == 0) {
    finish(self, job_status::completed);
    return;
  }
  const auto counts = data::split_weighted(n, st.mem.member_weights(st.weights));
  st.eval_owed.assign(st.workers.size(), {});
  st.eval_lost.assign(st.workers.size(), false);
  std::int64_t offset = 0;
  for (std::size_t r = 0; r < st.workers.size(); ++r) {
    if (!st.mem.is_member(r)) continue;
    send_share(self, r, {offset, counts[r]});
    offset += counts[r];
  }
}

void on_eval_done(job_self self, const msg::eval_done& m) {
  auto& st = self->state;
  if (!st.gate.admit(m)) return;
  const auto r = static_cast<std::size_t>(m.rank);
  // A lost worker's late answer: its share went to another member, which answers for it.
  if (m.rank < 0 || r >= st.eval_owed.size() || st.eval_lost[r] || st.eval_owed[r].empty()) return;
  st.eval_owed[r].pop_front();
  ++st.progress;
  st.eval_stats.loss_sum += m.loss_sum;
  st.eval_stats.samples += static_cast<std::size_t>(m.samples);
  st.eval_stats.correct += static_cast<std::size_t>(m.correct);
  for (const auto& owed : st.eval_owed)
    if (!owed.empty()) return;
  finish(self, job_status::completed);
}

std::optional<std::string> on_eval_worker_down(job_self self, const msg::worker_down& m) {
  auto& st = self->state;
  const auto r = static_cast<std::size_t>(m.rank);
  if (m.job != st.gate.job() || m.rank < 0 || r >= st.eval_owed.size() || st.eval_lost[r])
    return std::nullopt;
  ++st.progress;
  st.eval_lost[r] = true;
  const auto owed = std::move(st.eval_owed[r]);
  st.eval_owed[r].clear();
  const std::string what = "worker " + st.workers[r].name + " " + msg::cause_name(m) +
                           " while the job evaluates: " + m.reason;
  if (owed.empty()) {
    note_event(self, "failure", what + "; its share of the test set was answered");
    return std::nullopt;
  }
  // The first member not lost takes the share: evaluation reads the job's final parameters,
  // which every worker holds, so any of them gives the same figures.
  for (std::size_t q = 0; q < st.workers.size(); ++q) {
    if (q == r || !st.mem.is_member(q) || st.eval_lost[q]) continue;
    for (const auto& share : owed) send_share(self, q, share);
    note_event(self, "failure",
               what + "; its share of the test set (" + std::to_string(owed.front().count) +
                   " samples) goes to " + st.workers[q].name);
    return std::nullopt;
  }
  return what + "; no other member is left to evaluate its share of the test set";
}

}  // namespace troupe::actors
