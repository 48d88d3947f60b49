#pragma once
// The one cycle check of `after:` dependencies, for the config check (core/config_load) and the
// scheduler's admission (policies/scheduling): a job in a cycle would wait forever.
#include <cstddef>
#include <optional>
#include <vector>

namespace troupe {

// One hop of a cycle: node `node` and the index of the edge followed out of it.
struct cycle_hop {
  std::size_t node = 0;
  std::size_t edge = 0;
};

// `edges[i]`: the nodes node i depends on, by index. Returns a cycle as its hops, starting at
// the first node of the cycle the depth-first search met (the last hop's edge leads back to
// it), or nothing when the graph is acyclic. Iterative: deep chains do not overflow the stack.
std::optional<std::vector<cycle_hop>> find_cycle(
    const std::vector<std::vector<std::size_t>>& edges);

}  // namespace troupe
