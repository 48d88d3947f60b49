#include "collectives/direct.hpp"

#include <cstring>
#include <utility>
#include <vector>

#include "collectives/awaited.hpp"
#include "collectives/ring.hpp"
#include "collectives/segments.hpp"

namespace troupe::collectives {
namespace {

using combine_fn = void (*)(float*, const std::byte*, std::size_t);

// Adds every member's `elems` values into `into` in rank order: this rank's from `mine`, the
// others' from their messages tagged `header`. `into` must not overlap `mine`.
void sum_in_rank_order(communicator& comm, float* into, const float* mine, std::size_t elems,
                       const message_header& header, awaited& from, combine_fn combine) {
  const std::size_t bytes = elems * sizeof(float);
  const op_context& ctx = from.ctx();
  for (int peer = 0; peer < comm.size(); ++peer)
    if (peer != comm.rank()) from.expect(peer, header);
  for (int peer = 0; peer < comm.size(); ++peer) {
    if (peer == comm.rank()) {
      if (peer == 0)
        std::memcpy(into, mine, bytes);
      else
        combine(into, reinterpret_cast<const std::byte*>(mine), elems);
      continue;
    }
    peer_link& link = comm.link(peer);
    if (peer == 0) {
      link.receive_into(header, reinterpret_cast<std::byte*>(into), bytes, ctx);
    } else {
      link.receive(
          header,
          [&](const std::byte* piece, std::size_t got, std::size_t offset, std::size_t total) {
            expect_payload_size(total, bytes, link.peer(), ctx);
            combine(into + offset / sizeof(float), piece, got / sizeof(float));
          },
          ctx);
    }
    from.heard(peer);
  }
}

// The sum is built beside the caller's buffer, which the peers may still be reading; kept per
// thread so that a step allocates nothing once warm.
float* scratch(std::size_t elems) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < elems) buffer.resize(elems);
  return buffer.data();
}

combine_fn combine_of(reduce_op op) {
  return op == reduce_op::max ? max_into : add_into;
}

}  // namespace

void one_step_allreduce(communicator& comm, span<float> data, const op_tag& tag,
                        std::uint32_t phase, const op_context& op_ctx, reduce_op op) {
  const int n = comm.size();
  if (n == 1 || data.empty()) return;
  const close_on_throw guard{comm};
  awaited from{comm, op_ctx};
  const op_context& ctx = from.ctx();
  const std::size_t bytes = data.size() * sizeof(float);
  const message_header header = tag.header(phase, 0, 0, bytes);
  std::vector<std::uint64_t> tickets(static_cast<std::size_t>(n));
  for (int peer = 0; peer < n; ++peer)
    if (peer != comm.rank())
      tickets[static_cast<std::size_t>(peer)] = comm.link(peer).post(header, data.data(), ctx);
  float* sum = scratch(data.size());
  sum_in_rank_order(comm, sum, data.data(), data.size(), header, from, combine_of(op));
  for (int peer = 0; peer < n; ++peer)
    if (peer != comm.rank())
      comm.link(peer).wait_sent(tickets[static_cast<std::size_t>(peer)], ctx);
  std::memcpy(data.data(), sum, bytes);
}

void two_step_allreduce(communicator& comm, span<float> data, const op_tag& tag,
                        std::uint32_t phase, const op_context& op_ctx, reduce_op op) {
  const int n = comm.size();
  const auto me = static_cast<std::size_t>(comm.rank());
  if (n == 1 || data.empty()) return;
  const close_on_throw guard{comm};
  awaited from{comm, op_ctx};
  const op_context& ctx = from.ctx();
  const segments part{data.size(), static_cast<std::size_t>(n)};
  auto at = [&](std::size_t j) { return data.data() + part.offset(j); };
  auto header = [&](std::uint32_t ph, std::size_t j) {
    return tag.header(ph, 0, 0, part.length(j) * sizeof(float));
  };
  // An empty segment (fewer values than ranks) travels nowhere, on both sides alike.
  auto each_peer = [&](auto&& f) {
    for (int peer = 0; peer < n; ++peer)
      if (peer != comm.rank()) f(peer, static_cast<std::size_t>(peer));
  };

  // Round 1: segment j to its owner j.
  std::vector<std::uint64_t> scattered(static_cast<std::size_t>(n));
  each_peer([&](int peer, std::size_t j) {
    if (part.length(j) > 0) scattered[j] = comm.link(peer).post(header(phase, j), at(j), ctx);
  });
  if (part.length(me) > 0) {
    float* sum = scratch(part.length(me));
    sum_in_rank_order(comm, sum, at(me), part.length(me), header(phase, me), from, combine_of(op));
    std::memcpy(at(me), sum, part.length(me) * sizeof(float));  // no peer reads segment me
  }

  // Round 2: our sum to everyone; segment j's sum from its owner, written over our segment j
  // once its owner has taken our part of it.
  std::vector<std::uint64_t> gathered(static_cast<std::size_t>(n));
  if (part.length(me) > 0)
    each_peer([&](int peer, std::size_t j) {
      gathered[j] = comm.link(peer).post(header(phase + 1, me), at(me), ctx);
    });
  each_peer([&](int peer, std::size_t j) {
    if (part.length(j) > 0) from.expect(peer, header(phase + 1, j));
  });
  each_peer([&](int peer, std::size_t j) {
    if (part.length(j) == 0) return;
    peer_link& link = comm.link(peer);
    link.wait_sent(scattered[j], ctx);
    link.receive_into(header(phase + 1, j), reinterpret_cast<std::byte*>(at(j)),
                      part.length(j) * sizeof(float), ctx);
    from.heard(peer);
  });
  if (part.length(me) > 0)
    each_peer([&](int peer, std::size_t j) { comm.link(peer).wait_sent(gathered[j], ctx); });
}

}  // namespace troupe::collectives
