#include "core/dependency_cycle.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <vector>

using troupe::find_cycle;

TEST_CASE("find_cycle: none in a DAG, the cycle's hops otherwise") {
  using graph = std::vector<std::vector<std::size_t>>;
  CHECK_FALSE(find_cycle(graph{}));
  CHECK_FALSE(find_cycle(graph{{1, 2}, {2}, {}}));  // a diamond is not a cycle
  // 0 -> 1 -> 2 -> 0 reached from 3: the hops start at the cycle's first node, each with the
  // edge followed out of it.
  const auto c = find_cycle(graph{{1}, {2}, {0}, {0}});
  REQUIRE(c);
  REQUIRE(c->size() == 3);
  CHECK((*c)[0].node == 0);
  CHECK((*c)[1].node == 1);
  CHECK((*c)[2].node == 2);
  // The edge index names which dependency closes the loop: node 1 waits for 3, then 0.
  const auto d = find_cycle(graph{{1}, {3, 0}, {}, {}});
  REQUIRE(d);
  REQUIRE(d->size() == 2);
  CHECK((*d)[1].node == 1);
  CHECK((*d)[1].edge == 1);
  // A self-loop, and a long chain (no recursion to overflow).
  CHECK(find_cycle(graph{{0}})->size() == 1);
  graph chain(100000);
  for (std::size_t i = 0; i + 1 < chain.size(); ++i) chain[i].push_back(i + 1);
  CHECK_FALSE(find_cycle(chain));
  chain.back().push_back(0);
  CHECK(find_cycle(chain)->size() == chain.size());
}
