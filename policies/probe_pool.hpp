#pragma once
// The start-up probe times each device alone on a few steps, and on a shared host two identical
// devices can measure 20-30% apart (one was probed while the other's thread held the core). A
// group is a set of identical devices on one node by definition, so its members get one speed:
// the median of their probes. The split then gives them equal shares from the first step instead
// of waiting for the rebalancer to undo a probe's noise.
#include <string>
#include <vector>

namespace troupe::policies {

// seconds[r]: rank r's probed seconds per sample; group[r]: its group; pooled[r]: whether its
// group's devices are identical by configuration (false keeps rank r's own figure). Returns
// each rank's figure after pooling: the median over the pooled members of its group.
std::vector<double> pool_probes_by_group(const std::vector<double>& seconds,
                                         const std::vector<std::string>& group,
                                         const std::vector<bool>& pooled);

}  // namespace troupe::policies
