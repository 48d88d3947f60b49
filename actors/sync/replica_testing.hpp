#pragma once
// Test helpers for the worker side of the replica modes (sync: allreduce, local) without actors:
// made-up gradient sums and sample counts, and one rank's part in one step of them.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "actors/sync/allreduce_step.hpp"

namespace troupe::actors::testing {

struct replica_workload {
  std::vector<std::vector<std::vector<float>>> grads;  // [step][rank][i]
  std::vector<std::vector<std::int64_t>> samples;      // [step][rank]
};

// Rank `rank`'s part in step `s` of `w`, applied to `params` (as many as its gradient).
inline replica_step step_of(const replica_workload& w, std::size_t s, int rank, float* params) {
  const auto r = static_cast<std::size_t>(rank);
  replica_step rs;
  rs.rank = rank;
  rs.samples = w.samples[s][r];
  rs.contributed = rs.samples > 0;
  rs.grad = w.grads[s][r].data();
  for (auto b : w.samples[s]) rs.total_samples += b;
  rs.params = params;
  rs.count = w.grads[s][r].size();
  return rs;
}

}  // namespace troupe::actors::testing
