#pragma once
// The sweep every exact-sum test of an in-process allreduce runs: 1 to 8 ranks, and element
// counts that split unevenly over them (and none at all), each case on a fresh group.
#include <doctest/doctest.h>

#include <cstddef>
#include <initializer_list>
#include <vector>

#include "collectives/testing.hpp"

namespace troupe::collectives::testing {

// For every size from 1 to 8 and every count of `counts`: rank r of a fresh Group{size} runs
// wrong_elements(group, size, count, r), which answers how many elements its result got wrong.
// Every rank must finish without an error and with none wrong.
template <class Group, class F>
void check_exact_sums(std::initializer_list<std::size_t> counts, F wrong_elements) {
  for (int size = 1; size <= 8; ++size)
    for (std::size_t count : counts) {
      Group group{size};
      std::vector<std::size_t> bad(static_cast<std::size_t>(size), 99);
      const auto errors = run_ranks(size, [&](int rank) {
        bad[static_cast<std::size_t>(rank)] = wrong_elements(group, size, count, rank);
      });
      CAPTURE(size);
      CAPTURE(count);
      CHECK(first_failure(errors, bad) == "");
    }
}

}  // namespace troupe::collectives::testing
