#pragma once
// A slice's gradient buffer under the canonical reduction (config::reduction_block): one sum per
// block of the slice, each of `params` floats, one after the other (devices::device::run_blocks).
// A buffer without blocks is one sum, the same layout with one block. The shards and the shared
// allreduce add the sums of every slice in order; the worker reports the norm of their total.
#include <cstddef>
#include <vector>

#include "collectives/inproc/reduce_kernel.hpp"

namespace troupe::actors {

// Appends a pointer to each of `g`'s sums to `out`. False (nothing appended) when `g` is not a
// whole number of sums, which only a bug or a foreign buffer makes.
inline bool append_block_sums(const std::vector<float>& g, std::size_t params,
                              std::vector<const float*>& out) {
  if (params == 0 || g.empty() || g.size() % params != 0) return false;
  for (std::size_t at = 0; at < g.size(); at += params) out.push_back(g.data() + at);
  return true;
}

// |total of the `blocks` sums at g|^2: the slice's gradient norm as one sum would give it.
// `total` is scratch.
inline double block_sums_sq_norm(const float* g, std::size_t blocks, std::size_t params,
                                 std::vector<float>& total) {
  total.assign(params, 0.0f);
  for (std::size_t b = 0; b < blocks; ++b)
    for (std::size_t i = 0; i < params; ++i) total[i] += g[b * params + i];
  return collectives::sq_norm(total.data(), params);
}

inline double block_sums_sq_norm(const std::vector<float>& g, std::size_t params,
                                 std::vector<float>& total) {
  return block_sums_sq_norm(g.data(), params == 0 ? 0 : g.size() / params, params, total);
}

}  // namespace troupe::actors
