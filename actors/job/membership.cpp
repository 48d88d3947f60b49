#include "actors/job/membership.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "data/split.hpp"

namespace troupe::actors {

membership::membership(std::vector<std::string> names, std::vector<std::string> groups,
                       double watchdog_seconds, double floor_seconds)
    : names_(std::move(names)), groups_(std::move(groups)) {
  if (names_.size() != groups_.size())
    throw std::invalid_argument("membership: names and groups differ in length");
  const auto n = names_.size();
  status_.assign(n, member_status::member);
  owed_.assign(n, {});
  reported_at_.assign(n, -1.0);
  added_.assign(n, false);
  policies::deadline_params dp;
  dp.initial_seconds = std::min(dp.initial_seconds, watchdog_seconds);
  dp.floor_seconds = floor_seconds;
  deadline_ = policies::step_deadline(dp);
  stall_cap_ = dp.initial_seconds;
}

std::int32_t membership::add_rank(const std::string& name, const std::string& group) {
  names_.push_back(name);
  groups_.push_back(group);
  status_.push_back(member_status::restarting);
  owed_.emplace_back();
  reported_at_.push_back(-1.0);
  added_.push_back(true);
  return static_cast<std::int32_t>(status_.size() - 1);
}

bool membership::is_member(std::size_t rank) const {
  return rank < status_.size() && status_[rank] == member_status::member;
}

std::vector<double> membership::member_weights(std::vector<double> weights) const {
  for (std::size_t r = 0; r < weights.size(); ++r)
    if (!is_member(r)) weights[r] = 0.0;
  return weights;
}

std::string membership::member_list() const {
  std::string out;
  for (std::size_t r = 0; r < names_.size(); ++r)
    if (is_member(r)) out += " " + names_[r];
  return out.empty() ? " (none)" : out;
}

void membership::begin_step(std::int64_t step, const std::vector<std::int64_t>& counts) {
  step_ = step;
  results_.clear();
  orphans_.clear();
  step_failed_ = false;
  stall_waited_ = 0;
  std::int64_t offset = 0;
  for (std::size_t r = 0; r < owed_.size(); ++r) {
    owed_[r].clear();
    const auto count = r < counts.size() ? counts[r] : 0;
    if (count > 0) owed_[r].push_back({offset, count});
    offset += count;
  }
}

int membership::pending() const {
  auto n = static_cast<int>(orphans_.size());
  for (const auto& q : owed_) n += static_cast<int>(q.size());
  return n;
}

bool membership::accept(std::int32_t rank, std::shared_ptr<const std::vector<float>> grad,
                        double step_seconds) {
  const auto r = static_cast<std::size_t>(rank);
  if (rank < 0 || r >= owed_.size() || owed_[r].empty()) return false;
  const auto piece = owed_[r].front();
  owed_[r].pop_front();
  results_[piece.offset] = slice_result{rank, std::move(grad), piece.count};
  if (pending() == 0 && !step_failed_) deadline_.observe(step_seconds);
  return true;
}

// The failed ranks' slices go to the members, by their split weights, with the same sample
// indices.
void membership::replan(member_commands& out, const std::vector<double>& split) {
  const auto weights = member_weights(split);
  if (orphans_.empty() ||
      std::none_of(weights.begin(), weights.end(), [](double w) { return w > 0; }))
    return;
  count_recomputed();
  std::string text = "step " + std::to_string(step_) + " re-planned:";
  for (const auto& p : orphans_) {
    const auto counts = data::split_blocks(p.count, block_, weights);
    std::int64_t offset = p.offset;
    for (std::size_t q = 0; q < counts.size(); ++q) {
      if (counts[q] <= 0) continue;
      out.replan.push_back({static_cast<std::int32_t>(q), {offset, counts[q]}});
      owed_[q].push_back({offset, counts[q]});
      text += " " + names_[q] + "+" + std::to_string(counts[q]);
      offset += counts[q];
    }
  }
  orphans_.clear();
  out.replan_log = text;
  out.arm_deadline = true;
}

member_commands membership::on_down(const down_event& e, double now,
                                    const std::vector<double>& weights) {
  member_commands out;
  const auto r = static_cast<std::size_t>(e.rank);
  if (e.rank < 0 || r >= status_.size() || status_[r] == member_status::migrated) return out;
  const std::string what = "worker " + names_[r] + " " + name_of(e.kind) + ": " + e.reason;
  const double detected = reported_at_[r] >= 0 ? reported_at_[r] : now;
  reported_at_[r] = -1.0;
  ++report_.failures;
  ++report_.failures_by_class[name_of(e.kind)];
  open_recoveries_.push_back(detected);
  const bool was_member = status_[r] == member_status::member;
  std::string text = "failure: " + what + "; " + e.decision;
  if (e.restart) {
    status_[r] = member_status::restarting;
    ++report_.restarts;
  } else {
    status_[r] = member_status::migrated;
    const bool others = std::any_of(status_.begin(), status_.end(),
                                    [](member_status s) { return s != member_status::migrated; });
    if (!others && ++last_worker_restarts_ > last_worker_restart_limit) {
      out.fail = what + " (" + e.decision + "); no other worker is left, and the last one failed " +
                 std::to_string(last_worker_restart_limit) +
                 " more times after its restarts ran out";
      return out;
    }
    if (!others) {
      // Nobody left to migrate to: restart the last one past its intensity, a bounded number of
      // times (above), so that a worker that always fails ends the job instead of looping.
      status_[r] = member_status::restarting;
      ++report_.restarts;
      out.restart.push_back(e.rank);
      text += "; the last worker: restarted instead of migrated";
    } else {
      ++report_.migrations;
      text += "; its share moves to the other workers";
    }
  }
  out.log.push_back(text);
  for (const auto& p : owed_[r]) orphans_.push_back(p);
  owed_[r].clear();
  if (!orphans_.empty()) step_failed_ = true;
  // A restarted worker waiting for the next step boundary is the only one left: the step in
  // flight cannot reach that boundary without it, so it joins now.
  bool promoted = false;
  if (std::none_of(status_.begin(), status_.end(),
                   [](member_status s) { return s == member_status::member; }))
    for (auto& s : status_)
      if (s == member_status::joining) {
        s = member_status::member;
        promoted = true;
      }
  out.new_generation = was_member || promoted;
  replan(out, weights);
  return out;
}

deadline_verdict membership::on_timeout(std::int64_t seq, double now) {
  deadline_verdict out;
  if (seq != seq_ || pending() == 0) return out;
  // Members that owe a slice, and those of them not reported yet.
  std::vector<std::size_t> silent;
  std::size_t owing = 0;
  for (std::size_t r = 0; r < owed_.size(); ++r) {
    if (!is_member(r) || owed_[r].empty()) continue;
    ++owing;
    if (reported_at_[r] < 0) silent.push_back(r);
  }
  const double deadline = deadline_.deadline();
  // A stall (deadline_verdict): every member that owes a slice is silent and none answered one.
  const double waited = deadline + stall_waited_;
  if (silent.size() >= 2 && silent.size() == owing && results_.empty() && waited < stall_cap_) {
    out.wait_more = std::min(waited, stall_cap_ - waited);
    stall_waited_ += out.wait_more;
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "step %lld: all %zu members silent for %.3f s, none answered: waiting %.3f s "
                  "more before declaring them hung (a stall of the host is as likely)",
                  static_cast<long long>(step_), silent.size(), waited, out.wait_more);
    out.log = buf;
    return out;
  }
  for (auto r : silent) {
    // Every member of a group of two or more silent at once: the group is cut off.
    int in_group = 0, silent_in_group = 0;
    for (std::size_t q = 0; q < status_.size(); ++q) {
      if (groups_[q] != groups_[r] || !is_member(q)) continue;
      ++in_group;
      silent_in_group += std::find(silent.begin(), silent.end(), q) != silent.end();
    }
    silent_member m;
    m.rank = static_cast<std::int32_t>(r);
    m.kind = in_group >= 2 && silent_in_group == in_group ? failure_class::lost_group
                                                          : failure_class::hang;
    char buf[160];
    std::snprintf(buf, sizeof buf, "no answer to step %lld within the %.3f s deadline",
                  static_cast<long long>(step_), waited);
    m.reason = buf;
    reported_at_[r] = now;
    out.silent.push_back(std::move(m));
  }
  return out;
}

std::optional<member_commands> membership::on_restarted_ready(std::int32_t rank,
                                                              const std::vector<double>& weights) {
  const auto r = static_cast<std::size_t>(rank);
  if (rank < 0 || r >= status_.size() || status_[r] != member_status::restarting)
    return std::nullopt;
  member_commands out;
  status_[r] = member_status::joining;
  const bool alone = std::none_of(status_.begin(), status_.end(),
                                  [](member_status s) { return s == member_status::member; });
  out.log.push_back("worker " + names_[r] + (added_[r] ? " is ready" : " restarted") +
                    (alone ? ": takes over the step in flight" : ": joins at the next step"));
  added_[r] = false;
  // With no member left, the step in flight waits for it: it joins at once.
  if (alone) {
    status_[r] = member_status::member;
    out.new_generation = true;
    replan(out, weights);
  }
  return out;
}

bool membership::set_aside(std::int32_t rank) {
  const auto r = static_cast<std::size_t>(rank);
  if (rank < 0 || r >= status_.size() || status_[r] != member_status::member) return false;
  status_[r] = member_status::set_aside;
  return true;
}

bool membership::leave(std::int32_t rank) {
  const auto r = static_cast<std::size_t>(rank);
  if (rank < 0 || r >= status_.size() || status_[r] == member_status::migrated) return false;
  status_[r] = member_status::migrated;
  owed_[r].clear();
  return true;
}

void membership::count_recomputed() {
  if (recomputed_step_ == step_) return;
  recomputed_step_ = step_;
  ++report_.recomputed_steps;
}

bool membership::bring_back(std::int32_t rank) {
  const auto r = static_cast<std::size_t>(rank);
  if (rank < 0 || r >= status_.size() || status_[r] != member_status::set_aside) return false;
  status_[r] = member_status::joining;
  return true;
}

bool membership::join_at_boundary() {
  bool any = false;
  for (auto& s : status_)
    if (s == member_status::joining) {
      s = member_status::member;
      any = true;
    }
  return any;
}

void membership::abandon_step() {
  count_recomputed();
  for (auto& q : owed_) q.clear();
  orphans_.clear();
  results_.clear();
  step_failed_ = true;
}

void membership::step_completed(std::int64_t planned, std::int64_t computed, double now) {
  for (double t : open_recoveries_) report_.recovery_ms.push_back((now - t) * 1e3);
  open_recoveries_.clear();
  if (computed < planned) ++report_.lost_steps;
}

}  // namespace troupe::actors
