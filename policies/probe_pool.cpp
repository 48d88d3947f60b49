#include "policies/probe_pool.hpp"

#include <map>

#include "core/error.hpp"
#include "core/median.hpp"

namespace troupe::policies {

std::vector<double> pool_probes_by_group(const std::vector<double>& seconds,
                                         const std::vector<std::string>& group,
                                         const std::vector<bool>& pooled) {
  if (group.size() != seconds.size() || pooled.size() != seconds.size())
    throw runtime_failure("pool_probes_by_group: " + std::to_string(seconds.size()) +
                          " probes for " + std::to_string(group.size()) + " groups and " +
                          std::to_string(pooled.size()) + " flags");
  std::map<std::string, std::vector<double>> members;
  for (std::size_t r = 0; r < seconds.size(); ++r)
    if (pooled[r]) members[group[r]].push_back(seconds[r]);
  std::vector<double> out = seconds;
  for (std::size_t r = 0; r < seconds.size(); ++r)
    if (pooled[r]) out[r] = median(members[group[r]]);
  return out;
}

}  // namespace troupe::policies
