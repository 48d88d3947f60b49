#include "policies/scheduling.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "core/dependency_cycle.hpp"
#include "core/error.hpp"

namespace troupe::policies {

namespace {

// Indices of the eligible groups with free devices, validated.
std::vector<std::size_t> eligible(const std::vector<group_state>& groups,
                                  const std::vector<std::string>& allowed) {
  for (const auto& g : groups)
    if (g.free < 0 || g.free > g.capacity || !(g.speed > 0.0))
      throw input_error("group '" + g.name + "': need 0 <= free <= capacity and speed > 0");
  for (const auto& a : allowed)
    if (std::none_of(groups.begin(), groups.end(),
                     [&](const group_state& g) { return g.name == a; }))
      throw input_error("placement: unknown resource group '" + a + "'");
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const bool ok = allowed.empty() ||
                    std::find(allowed.begin(), allowed.end(), groups[i].name) != allowed.end();
    if (ok && groups[i].free > 0) out.push_back(i);
  }
  return out;
}

placement to_placement(const std::vector<group_state>& groups, const std::vector<int>& take) {
  placement p;
  for (std::size_t i = 0; i < groups.size(); ++i)
    if (take[i] > 0) p.push_back({groups[i].name, take[i]});
  return p;
}

std::optional<int> check_demand(const std::vector<group_state>& groups,
                                const std::vector<std::size_t>& idx, int demand) {
  if (demand < 1) throw input_error("placement: demand must be >= 1");
  int total = 0;
  for (auto i : idx) total += groups[i].free;
  if (total < demand) return std::nullopt;
  return total;
}

}  // namespace

std::optional<placement> place_uniform(const std::vector<group_state>& groups, int demand,
                                       const std::vector<std::string>& allowed) {
  auto idx = eligible(groups, allowed);
  if (!check_demand(groups, idx, demand)) return std::nullopt;
  // Fewest free first: those that cannot take the even share are exhausted before the share is
  // recomputed for the rest; the floor division leaves the remainder to the larger groups.
  std::stable_sort(idx.begin(), idx.end(),
                   [&](std::size_t a, std::size_t b) { return groups[a].free < groups[b].free; });
  std::vector<int> take(groups.size(), 0);
  int remaining = demand;
  for (std::size_t k = 0; k < idx.size(); ++k) {
    // Floor of the even share of what is left: the last group takes the rest, so the remainder
    // ends up on the groups with the most free devices.
    const int left = int(idx.size() - k);
    take[idx[k]] = std::min(groups[idx[k]].free, remaining / left);
    remaining -= take[idx[k]];
  }
  return to_placement(groups, take);
}

std::optional<placement> place_resource_state(const std::vector<group_state>& groups, int demand,
                                              const std::vector<std::string>& allowed) {
  auto idx = eligible(groups, allowed);
  if (!check_demand(groups, idx, demand)) return std::nullopt;
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    if (groups[a].free != groups[b].free) return groups[a].free > groups[b].free;
    return groups[a].speed > groups[b].speed;
  });
  std::vector<int> take(groups.size(), 0);
  int remaining = demand;
  for (auto i : idx) {
    take[i] = std::min(groups[i].free, remaining);
    remaining -= take[i];
    if (remaining == 0) break;
  }
  return to_placement(groups, take);
}

std::optional<placement> place(placement_kind kind, const std::vector<group_state>& groups,
                               int demand, const std::vector<std::string>& allowed) {
  return kind == placement_kind::uniform ? place_uniform(groups, demand, allowed)
                                         : place_resource_state(groups, demand, allowed);
}

lpt_result lpt_schedule(const std::vector<double>& durations, const std::vector<double>& speeds) {
  if (speeds.empty()) throw input_error("lpt_schedule: no machines");
  for (double s : speeds)
    if (!(s > 0.0) || !std::isfinite(s)) throw input_error("lpt_schedule: speeds must be > 0");
  for (double d : durations)
    if (!(d >= 0.0) || !std::isfinite(d))
      throw input_error("lpt_schedule: durations must be finite and >= 0");
  std::vector<std::size_t> order(durations.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return durations[a] > durations[b]; });
  lpt_result r;
  r.machine_of.assign(durations.size(), 0);
  r.finish.assign(speeds.size(), 0.0);
  for (auto j : order) {
    std::size_t best = 0;
    for (std::size_t k = 1; k < speeds.size(); ++k)
      if (r.finish[k] + durations[j] / speeds[k] < r.finish[best] + durations[j] / speeds[best])
        best = k;
    r.machine_of[j] = best;
    r.finish[best] += durations[j] / speeds[best];
  }
  r.makespan = *std::max_element(r.finish.begin(), r.finish.end());
  return r;
}

double makespan_lower_bound(const std::vector<double>& durations, std::size_t machines) {
  if (machines == 0) throw input_error("makespan_lower_bound: no machines");
  if (durations.empty()) return 0.0;
  std::vector<double> p = durations;
  std::sort(p.begin(), p.end(), std::greater<double>());
  double lb = std::max(std::accumulate(p.begin(), p.end(), 0.0) / double(machines), p[0]);
  if (p.size() > machines) lb = std::max(lb, p[machines - 1] + p[machines]);
  return lb;
}

std::optional<std::vector<std::string>> find_dependency_cycle(
    const std::vector<job_request>& jobs) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < jobs.size(); ++i) index.emplace(jobs[i].name, i);
  std::vector<std::vector<std::size_t>> edges(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i)
    for (const auto& dep : jobs[i].after)
      if (const auto it = index.find(dep); it != index.end())  // not pending: no cycle through it
        edges[i].push_back(it->second);
  const auto hops = find_cycle(edges);
  if (!hops) return std::nullopt;
  std::vector<std::string> cycle;
  for (const auto& hop : *hops) cycle.push_back(jobs[hop.node].name);
  cycle.push_back(jobs[hops->front().node].name);
  return cycle;
}

admission_result admit(const std::vector<job_request>& pending,
                       const std::vector<group_state>& groups,
                       const std::set<std::string>& completed, const std::set<std::string>& running,
                       const admission_options& options) {
  std::set<std::string> names;
  for (const auto& j : pending)
    if (!names.insert(j.name).second)
      throw input_error("admission: job '" + j.name + "' is pending twice");
  for (const auto& j : pending)
    for (const auto& d : j.after)
      if (!names.count(d) && !completed.count(d) && !running.count(d))
        throw input_error("job '" + j.name + "': after: unknown job '" + d + "'");
  if (const auto cycle = find_dependency_cycle(pending)) {
    std::string msg = "admission: dependency cycle ";
    for (std::size_t i = 0; i < cycle->size(); ++i) msg += (i ? " -> " : "") + (*cycle)[i];
    throw input_error(msg);
  }

  std::vector<std::size_t> order(pending.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return pending[a].priority > pending[b].priority;
  });

  auto free_groups = groups;
  admission_result r;
  bool blocked = false;
  for (auto i : order) {
    const auto& job = pending[i];
    const bool ready = std::all_of(job.after.begin(), job.after.end(),
                                   [&](const std::string& d) { return completed.count(d) > 0; });
    if (!ready) {
      r.waiting_deps.push_back(job.name);
      continue;
    }
    // Could it ever fit, with every device of its groups free?
    auto all_free = groups;
    for (auto& g : all_free) g.free = g.capacity;
    if (!place(job.kind, all_free, job.demand, job.resources)) {
      r.infeasible.push_back(job.name);
      continue;
    }
    if (blocked) {
      r.waiting_resources.push_back(job.name);
      continue;
    }
    auto where = place(job.kind, free_groups, job.demand, job.resources);
    if (!where) {
      r.waiting_resources.push_back(job.name);
      blocked = !options.backfill;
      continue;
    }
    for (const auto& e : *where)
      for (auto& g : free_groups)
        if (g.name == e.group) g.free -= e.devices;
    r.start.push_back({job.name, std::move(*where)});
  }
  return r;
}

}  // namespace troupe::policies
