#include "policies/preemption.hpp"

#include <algorithm>

namespace troupe::policies {
namespace {

void free_held(std::vector<group_state>& groups, const placement& held) {
  for (const auto& h : held)
    for (auto& g : groups)
      if (g.name == h.group) g.free = std::min(g.capacity, g.free + h.devices);
}

// Pausing a job that holds nothing the waiting job may use makes no room for it.
bool holds_usable(const preemption_candidate& r, const std::vector<std::string>& allowed) {
  for (const auto& h : r.held)
    if (h.devices > 0 &&
        (allowed.empty() || std::find(allowed.begin(), allowed.end(), h.group) != allowed.end()))
      return true;
  return false;
}

bool fits(const job_request& waiting, const std::vector<group_state>& groups) {
  return place(waiting.kind, groups, waiting.demand, waiting.resources).has_value();
}

}  // namespace

std::vector<std::string> preemption_victims(const job_request& waiting,
                                            std::vector<group_state> groups,
                                            std::vector<preemption_candidate> running) {
  for (const auto& r : running)
    if (r.pausing) free_held(groups, r.held);
  if (fits(waiting, groups)) return {};
  running.erase(std::remove_if(running.begin(), running.end(),
                               [&](const preemption_candidate& r) {
                                 return r.pausing || !r.preemptible ||
                                        r.priority >= waiting.priority ||
                                        !holds_usable(r, waiting.resources);
                               }),
                running.end());
  std::sort(running.begin(), running.end(),
            [](const preemption_candidate& a, const preemption_candidate& b) {
              return a.priority != b.priority ? a.priority < b.priority : a.seq > b.seq;
            });
  std::vector<std::string> chosen;
  for (const auto& r : running) {
    free_held(groups, r.held);
    chosen.push_back(r.job);
    if (fits(waiting, groups)) return chosen;
  }
  return {};
}

}  // namespace troupe::policies
