#include "collectives/ring.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "collectives/segments.hpp"

namespace troupe::collectives {

// `src` is a received frame (a ZeroMQ message body, a shared-memory slot): nothing promises it is
// aligned for float, so each value is read with memcpy, which the compiler turns into the same
// unaligned vector loads as a float pointer would give, without undefined behaviour.
namespace {

float load(const std::byte* src, std::size_t i) {
  float v;
  std::memcpy(&v, src + i * sizeof(float), sizeof(float));
  return v;
}

}  // namespace

void add_into(float* dst, const std::byte* src, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) dst[i] += load(src, i);
}

void max_into(float* dst, const std::byte* src, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    const float in = load(src, i);
    dst[i] = in > dst[i] ? in : dst[i];
  }
}

// Ring allreduce on n ranks, after gloo's allreduce_ring_chunked:
//
// Reduce-scatter: at step s (0 .. n-2) rank r sends segment (r - s) to its right neighbour and
// receives segment (r - s - 1) from its left neighbour, adding it into its own copy. After n-1
// steps rank r holds the complete sum of segment (r + 1).
//
// Allgather: at step s (0 .. n-2) rank r sends the complete segment (r + 1 - s) to its right
// neighbour and receives the complete segment (r - s) from its left one, overwriting its copy.
//
// Pipelining: the segment received at step s is exactly the one sent at step s + 1, so each
// chunk is posted onwards as soon as it has been reduced, and the last reduce-scatter step feeds
// allgather step 0 the same way. Chunks are posted without copying; a chunk posted during
// reduce-scatter step s is overwritten during allgather step s, so before that we wait for its
// ticket (the right neighbour has taken it).
void ring_allreduce(communicator& comm, span<float> data, const op_tag& tag,
                    std::uint32_t phase_base, const op_context& ctx, std::size_t chunk_bytes,
                    reduce_op op) {
  const auto combine = op == reduce_op::max ? max_into : add_into;
  const std::size_t n = static_cast<std::size_t>(comm.size());
  const long long r = comm.rank();
  if (n == 1 || data.empty()) return;
  const close_on_throw guard{comm};
  peer_link& right = comm.link(right_of(comm.rank(), comm.size()));
  peer_link& left = comm.link(left_of(comm.rank(), comm.size()));
  const std::uint32_t reduce_scatter = phase_base, allgather = phase_base + 1;
  const segments segment{data.size(), n};
  const chunking chunk{chunk_bytes / sizeof(float)};
  const std::size_t steps = n - 1;

  auto chunk_ptr = [&](std::size_t seg, std::size_t c) {
    return data.data() + segment.offset(seg) + chunk.offset(c);
  };
  auto chunk_bytes_of = [&](std::size_t seg, std::size_t c) {
    return chunk.length(segment.length(seg), c) * sizeof(float);
  };
  auto post = [&](std::uint32_t phase, std::size_t step, std::size_t seg, std::size_t c) {
    return right.post(tag.header(phase, static_cast<std::uint32_t>(step),
                                 static_cast<std::uint32_t>(c), chunk_bytes_of(seg, c)),
                      chunk_ptr(seg, c), ctx);
  };

  // reduce_scatter_tickets[s][c]: the post of chunk c at reduce-scatter step s.
  std::vector<std::vector<std::uint64_t>> reduce_scatter_tickets(steps);
  const std::size_t first = mod(r, n);
  for (std::size_t c = 0; c < chunk.chunks_in(segment.length(first)); ++c)
    reduce_scatter_tickets[0].push_back(post(reduce_scatter, 0, first, c));

  for (std::size_t step = 0; step < steps; ++step) {
    const std::size_t recv_segment = mod(r - static_cast<long long>(step) - 1, n);
    for (std::size_t c = 0; c < chunk.chunks_in(segment.length(recv_segment)); ++c) {
      float* into = chunk_ptr(recv_segment, c);
      const std::size_t expected = chunk_bytes_of(recv_segment, c);
      left.receive(
          tag.header(reduce_scatter, static_cast<std::uint32_t>(step),
                     static_cast<std::uint32_t>(c), 0),
          [&](const std::byte* piece, std::size_t bytes, std::size_t offset, std::size_t total) {
            expect_payload_size(total, expected, left.peer(), ctx);
            combine(into + offset / sizeof(float), piece, bytes / sizeof(float));
          },
          ctx);
      if (step + 1 < steps)
        reduce_scatter_tickets[step + 1].push_back(post(reduce_scatter, step + 1, recv_segment, c));
      else
        post(allgather, 0, recv_segment, c);  // complete: it opens the allgather
    }
  }

  for (std::size_t step = 0; step < steps; ++step) {
    const std::size_t recv_segment = mod(r - static_cast<long long>(step), n);
    for (std::size_t c = 0; c < chunk.chunks_in(segment.length(recv_segment)); ++c) {
      right.wait_sent(reduce_scatter_tickets[step][c], ctx);
      left.receive_into(
          tag.header(allgather, static_cast<std::uint32_t>(step), static_cast<std::uint32_t>(c), 0),
          reinterpret_cast<std::byte*>(chunk_ptr(recv_segment, c)), chunk_bytes_of(recv_segment, c),
          ctx);
      if (step + 1 < steps) post(allgather, step + 1, recv_segment, c);
    }
  }
  right.flush(ctx);
}

// Chain broadcast: ranks in ring order starting at the root form a chain; every rank but the
// last forwards each chunk to its right neighbour as soon as it has it, so all links carry
// chunks at the same time (a pipeline) and the time is about bytes / bandwidth, not n times it.
void chain_broadcast(communicator& comm, std::byte* data, std::size_t bytes, int root,
                     const op_tag& tag, std::uint32_t phase, const op_context& ctx,
                     std::size_t chunk_bytes) {
  const int n = comm.size();
  if (n == 1 || bytes == 0) return;
  const close_on_throw guard{comm};
  const int position = (comm.rank() - root + n) % n;
  const bool last = position == n - 1;
  const chunking chunk{chunk_bytes};
  const std::size_t chunks = chunk.chunks_in(bytes);
  peer_link* right = last ? nullptr : &comm.link(right_of(comm.rank(), n));
  for (std::size_t c = 0; c < chunks; ++c) {
    std::byte* at = data + chunk.offset(c);
    const std::size_t length = chunk.length(bytes, c);
    if (position != 0) {
      comm.link(left_of(comm.rank(), n))
          .receive_into(tag.header(phase, 0, static_cast<std::uint32_t>(c), 0), at, length, ctx);
    }
    if (right) right->post(tag.header(phase, 0, static_cast<std::uint32_t>(c), length), at, ctx);
  }
  if (right) right->flush(ctx);
}

}  // namespace troupe::collectives
