#pragma once
// Two-level allreduce for groups of fast-connected ranks (GPUs of one host, processes of one
// node): first a ring allreduce inside each group, then a ring allreduce across the group
// leaders (the lowest rank of each group), then a broadcast from each leader inside its group.
// Only leaders use the slow links, and each moves the buffer once per level.
#include <vector>

#include "collectives/options.hpp"
#include "core/span.hpp"

namespace troupe::collectives {

struct hierarchical_allreduce_options : op_options {
  span<float> data;
  // group_of[rank]: the group id of each rank of the communicator (any integers). Ranks of one
  // group need links among themselves; leaders need links to the neighbouring leaders.
  std::vector<int> group_of;
};

void hierarchical_allreduce(const hierarchical_allreduce_options& options);

}  // namespace troupe::collectives
