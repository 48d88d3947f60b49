#pragma once
// The ring building blocks shared by the public collectives (allreduce, hierarchical allreduce,
// broadcast). They run on an already-drawn op tag, so a composite op can run several of them
// under one op id with distinct phases.
#include <cstddef>
#include <cstdint>

#include "collectives/communicator.hpp"
#include "collectives/options.hpp"
#include "core/span.hpp"

namespace troupe::collectives {

// Sum (or max) of float32 over the ring; uses phases phase_base and phase_base + 1.
void ring_allreduce(communicator& comm, span<float> data, const op_tag& tag,
                    std::uint32_t phase_base, const op_context& ctx, std::size_t chunk_bytes,
                    reduce_op op = reduce_op::sum);

// Pipelined chain broadcast of raw bytes from `root`; uses phase `phase`.
void chain_broadcast(communicator& comm, std::byte* data, std::size_t bytes, int root,
                     const op_tag& tag, std::uint32_t phase, const op_context& ctx,
                     std::size_t chunk_bytes);

// dst[i] += src[i]; src may have any alignment (a ZeroMQ body usually is not 4-byte aligned).
void add_into(float* dst, const std::byte* src, std::size_t count);
// dst[i] = max(dst[i], src[i]).
void max_into(float* dst, const std::byte* src, std::size_t count);

}  // namespace troupe::collectives
