#include "policies/placement.hpp"

#include <algorithm>
#include <set>

#include "core/error.hpp"

namespace troupe::policies {
namespace {

std::vector<std::string> candidates(const queued_job& job,
                                    const std::vector<group_capacity>& groups) {
  std::vector<std::string> out = job.groups;
  if (out.empty())
    for (const auto& g : groups) out.push_back(g.name);
  return out;
}

const group_capacity& find(const std::vector<group_capacity>& groups, const std::string& name,
                           const std::string& job) {
  for (const auto& g : groups)
    if (g.name == name) return g;
  throw input_error("job '" + job + "': resources: no group named '" + name + "'");
}

}  // namespace

std::vector<std::pair<std::string, int>> place(const queued_job& job,
                                               const std::vector<group_capacity>& groups) {
  const auto names = candidates(job, groups);
  std::vector<std::pair<std::string, int>> take;
  if (job.placement == "uniform") {
    for (const auto& n : names) {
      const auto& g = find(groups, n, job.name);
      if (g.free <= 0) return {};
      take.emplace_back(n, g.free);
    }
    return take;
  }
  if (job.placement == "resource-state") {
    const group_capacity* best = nullptr;
    for (const auto& n : names) {
      const auto& g = find(groups, n, job.name);
      if (g.free <= 0) continue;
      if (!best || g.free * g.weight > best->free * best->weight) best = &g;
    }
    if (best) take.emplace_back(best->name, best->free);
    return take;
  }
  throw input_error("job '" + job.name + "': placement: unknown '" + job.placement +
                    "' (uniform | resource-state)");
}

admission admit(std::vector<queued_job> queue, std::vector<group_capacity> groups,
                const job_outcomes& outcomes) {
  std::stable_sort(queue.begin(), queue.end(), [](const queued_job& a, const queued_job& b) {
    return a.priority != b.priority ? a.priority > b.priority : a.seq < b.seq;
  });
  admission out;
  std::set<std::string> reserved;
  for (const auto& job : queue) {
    bool dead_dep = false;
    bool ready = true;
    for (const auto& dep : job.after) {
      auto it = outcomes.find(dep);
      const std::string state = it == outcomes.end() ? "" : it->second;
      if (state == "failed" || state == "cancelled") dead_dep = true;
      if (state != "completed") ready = false;
    }
    if (dead_dep) {
      out.cancel.push_back(job.name);
      continue;
    }
    if (!ready) continue;
    // Groups reserved by a waiting higher-priority job look full to this one.
    auto view = groups;
    for (auto& g : view)
      if (reserved.count(g.name)) g.free = 0;
    auto take = place(job, view);
    if (take.empty()) {
      for (const auto& n : candidates(job, groups)) reserved.insert(n);
      continue;
    }
    for (const auto& [name, n] : take)
      for (auto& g : groups)
        if (g.name == name) g.free -= n;
    out.start.push_back({job.name, std::move(take)});
  }
  return out;
}

}  // namespace troupe::policies
