#include "actors/tasks/task_queue.hpp"

#include <algorithm>

#include "policies/preemption.hpp"

namespace troupe::actors {

// The devices a job asks for: every device of the groups it names (all groups when it names
// none). The config has no smaller device count yet; policies::admit takes any demand.
int demand_of(const tm_state& st, const config::job_config& cfg) {
  int n = 0;
  for (const auto& g : st.groups)
    if (cfg.resources.empty() ||
        std::find(cfg.resources.begin(), cfg.resources.end(), g.cfg.name) != cfg.resources.end())
      n += g.cfg.count;
  return std::max(1, n);
}

// Elastic jobs: a group is present when it computes here or its agent has joined.
bool group_present(const tm_state& st, const config::group_config& g) {
  const auto& agents = st.opts.agents;
  return g.process == group_process::local || (agents && agents->find(g.name));
}

// The groups as the admission policy sees them: free devices now.
std::vector<policies::group_state> group_states(const tm_state& st) {
  std::vector<policies::group_state> groups;
  for (const auto& g : st.groups) {
    int free = 0;
    for (bool b : g.busy) free += b ? 0 : 1;
    if (g.cfg.shared) free = g.cfg.count;  // time-sliced, never held exclusively
    if (st.opts.hold_for_agents && !group_present(st, g.cfg)) free = 0;
    groups.push_back(
        {g.cfg.name, free, g.cfg.count,
         g.cfg.weight.value_or(g.cfg.device == device_kind::sim ? 1.0 / g.cfg.slowdown : 1.0)});
  }
  return groups;
}

policies::job_request request_of(const tm_state& st, const queued_entry& q) {
  policies::job_request r;
  r.name = q.cfg.name;
  r.priority = q.cfg.priority;
  r.demand = demand_of(st, q.cfg);
  r.after = q.cfg.after;
  r.resources = q.cfg.resources;
  r.kind = q.cfg.placement;
  return r;
}

std::vector<preemption> preemptions(const tm_state& st,
                                    const std::vector<std::string>& waiting_resources) {
  std::vector<const queued_entry*> waiting;
  for (const auto& name : waiting_resources)
    for (const auto& q : st.queue)
      if (q.cfg.name == name) waiting.push_back(&q);
  std::stable_sort(waiting.begin(), waiting.end(),
                   [](const auto* a, const auto* b) { return a->cfg.priority > b->cfg.priority; });
  std::vector<preemption> out;
  for (const auto* q : waiting) {
    std::vector<policies::preemption_candidate> running;
    for (const auto& [id, run] : st.running) {
      policies::preemption_candidate c;
      c.job = run.name;
      c.priority = run.entry.cfg.priority;
      c.seq = run.entry.seq;
      c.preemptible = run.entry.cfg.preemptible && run.actor;
      // Paused already, or by an earlier decision of this pass.
      c.pausing =
          !run.preempted_by.empty() ||
          std::any_of(out.begin(), out.end(), [&](const preemption& p) { return p.victim == id; });
      for (const auto& [group, devices] : run.held)
        for (const auto& g : st.groups)
          if (g.cfg.name == group && !g.cfg.shared)
            c.held.push_back({group, static_cast<int>(devices.size())});
      running.push_back(std::move(c));
    }
    for (const auto& victim :
         policies::preemption_victims(request_of(st, *q), group_states(st), running))
      for (const auto& [id, run] : st.running)
        if (run.name == victim) out.push_back({id, q->cfg.name});
  }
  return out;
}

// Why each queued job still waits, for runtime::jobs() (`troupe status`).
void note_waiting(tm_state& st, const policies::admission_result& adm) {
  st.waiting.clear();
  for (const auto& q : st.queue) {
    std::string deps;
    for (const auto& dep : q.cfg.after) {
      const auto o = st.outcomes.find(dep);
      if (o == st.outcomes.end() || o->second != job_status::completed)
        deps += (deps.empty() ? "" : ", ") + ("'" + dep + "'") +
                (o == st.outcomes.end() ? " (not submitted)" : "");
    }
    std::string why =
        !deps.empty() ? "waiting for " + deps + " to complete" : "waiting for free devices";
    if (std::find(adm.waiting_resources.begin(), adm.waiting_resources.end(), q.cfg.name) !=
            adm.waiting_resources.end() &&
        st.opts.hold_for_agents)
      for (const auto& g : st.groups)
        if ((q.cfg.resources.empty() || std::find(q.cfg.resources.begin(), q.cfg.resources.end(),
                                                  g.cfg.name) != q.cfg.resources.end()) &&
            !group_present(st, g.cfg))
          why += " (no agent for group '" + g.cfg.name + "')";
    if (!q.resume_dir.empty()) why = "paused for a higher-priority job; " + why;
    st.waiting[q.cfg.name] = why;
  }
}

jobs_view view_of(const tm_state& st) {
  jobs_view view;
  std::vector<const queued_entry*> queued;
  for (const auto& q : st.queue) queued.push_back(&q);
  // Admission takes jobs by priority, first come first within one (policies/scheduling.hpp).
  std::stable_sort(queued.begin(), queued.end(),
                   [](const auto* a, const auto* b) { return a->cfg.priority > b->cfg.priority; });
  for (const auto* q : queued) {
    const auto w = st.waiting.find(q->cfg.name);
    view.jobs.push_back({q->cfg.name, "queued", q->cfg.priority, q->cfg.preemptible,
                         static_cast<int>(view.jobs.size()),
                         w == st.waiting.end() ? "" : w->second});
  }
  for (const auto& [id, run] : st.running)
    view.jobs.push_back({run.name, "running", run.entry.cfg.priority, run.entry.cfg.preemptible, -1,
                         run.preempted_by.empty() ? (run.actor ? "" : "waiting for min_devices")
                                                  : "pausing for '" + run.preempted_by + "'"});
  for (const auto& r : st.reports)
    view.jobs.push_back({r.name, name_of(r.status), 0, false, -1, r.error});
  return view;
}

}  // namespace troupe::actors
