#pragma once
// Broadcast from `root` to every member, as a pipelined chain along the ring (see ring.cpp).
#include <cstddef>

#include "collectives/options.hpp"
#include "core/span.hpp"

namespace troupe::collectives {

struct broadcast_options : op_options {
  span<std::byte> data;  // the root's bytes; overwritten on the others (same size everywhere)
  int root = 0;
};

void broadcast(const broadcast_options& options);

// Views a float buffer as the bytes broadcast works on.
inline span<std::byte> as_bytes(span<float> values) {
  return {reinterpret_cast<std::byte*>(values.data()), values.size() * sizeof(float)};
}

}  // namespace troupe::collectives
