#include "core/dependency_cycle.hpp"

#include <algorithm>

namespace troupe {

std::optional<std::vector<cycle_hop>> find_cycle(
    const std::vector<std::vector<std::size_t>>& edges) {
  enum class mark { fresh, open, done };
  std::vector<mark> state(edges.size(), mark::fresh);
  std::vector<cycle_hop> path;  // the open nodes; `edge` is the next edge to follow
  for (std::size_t root = 0; root < edges.size(); ++root) {
    if (state[root] != mark::fresh) continue;
    state[root] = mark::open;
    path.assign(1, {root, 0});
    while (!path.empty()) {
      auto& top = path.back();
      if (top.edge == edges[top.node].size()) {
        state[top.node] = mark::done;
        path.pop_back();
        continue;
      }
      const std::size_t to = edges[top.node][top.edge];
      if (state[to] == mark::open) {
        const auto from = std::find_if(path.begin(), path.end(),
                                       [&](const cycle_hop& h) { return h.node == to; });
        return std::vector<cycle_hop>(from, path.end());
      }
      ++top.edge;
      if (state[to] == mark::fresh) {
        state[to] = mark::open;
        path.push_back({to, 0});
      }
    }
  }
  return std::nullopt;
}

}  // namespace troupe
