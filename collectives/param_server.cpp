#include "collectives/param_server.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "collectives/ring.hpp"
#include "collectives/segments.hpp"

namespace troupe::collectives {
namespace {

constexpr std::uint32_t phase_push = 0, phase_pull = 1;

segments shards_of(const ps_layout& layout) {
  if (layout.servers.empty()) throw input_error("parameter server: layout has no servers");
  return segments{layout.count, layout.servers.size()};
}

std::size_t shard_index(const ps_layout& layout, int rank) {
  auto it = std::find(layout.servers.begin(), layout.servers.end(), rank);
  if (it == layout.servers.end())
    throw input_error("parameter server: rank " + std::to_string(rank) + " is not a server");
  return static_cast<std::size_t>(it - layout.servers.begin());
}

// Sends `bytes` from `data` to `link` in chunks tagged (phase, chunk).
void post_chunks(peer_link& link, const std::byte* data, std::size_t bytes, const op_tag& tag,
                 std::uint32_t phase, const op_context& ctx, std::size_t chunk_bytes) {
  const chunking chunk{chunk_bytes};
  for (std::size_t c = 0; c < chunk.chunks_in(bytes); ++c)
    link.post(tag.header(phase, 0, static_cast<std::uint32_t>(c), chunk.length(bytes, c)),
              data + chunk.offset(c), ctx);
}

// Receives `bytes` in chunks and hands each piece to `into(piece, bytes, offset_in_payload)`.
template <class Into>
void receive_chunks(peer_link& link, std::size_t bytes, const op_tag& tag, std::uint32_t phase,
                    const op_context& ctx, std::size_t chunk_bytes, Into into) {
  const chunking chunk{chunk_bytes};
  for (std::size_t c = 0; c < chunk.chunks_in(bytes); ++c) {
    const std::size_t expected = chunk.length(bytes, c), base = chunk.offset(c);
    link.receive(
        tag.header(phase, 0, static_cast<std::uint32_t>(c), 0),
        [&](const std::byte* piece, std::size_t piece_bytes, std::size_t offset,
            std::size_t total) {
          if (total != expected)
            throw collective_error(failure_kind::protocol, link.peer(),
                                   ctx.op_name + ": " + link.peer().describe() +
                                       " sent a chunk of " + std::to_string(total) +
                                       " bytes, expected " + std::to_string(expected));
          into(piece, piece_bytes, base + offset);
        },
        ctx);
  }
}

}  // namespace

std::size_t ps_layout::shard_offset(std::size_t k) const {
  return shards_of(*this).offset(k);
}
std::size_t ps_layout::shard_length(std::size_t k) const {
  return shards_of(*this).length(k);
}

void ps_push(const ps_push_options& options) {
  op_context ctx;
  const op_tag tag = begin_op(options, "ps push", ctx);
  const close_on_throw guard{*options.comm};
  const segments shard = shards_of(options.layout);
  if (options.gradient.size() != options.layout.count)
    throw input_error("ps push: gradient has " + std::to_string(options.gradient.size()) +
                      " values, layout says " + std::to_string(options.layout.count));
  for (std::size_t k = 0; k < options.layout.servers.size(); ++k)
    post_chunks(options.comm->link(options.layout.servers[k]),
                reinterpret_cast<const std::byte*>(options.gradient.data() + shard.offset(k)),
                shard.length(k) * sizeof(float), tag, phase_push, ctx, options.chunk_bytes);
  for (int server : options.layout.servers) options.comm->link(server).flush(ctx);
}

void ps_pull(const ps_pull_options& options) {
  op_context ctx;
  const op_tag tag = begin_op(options, "ps pull", ctx);
  const segments shard = shards_of(options.layout);
  if (options.params.size() != options.layout.count)
    throw input_error("ps pull: params has " + std::to_string(options.params.size()) +
                      " values, layout says " + std::to_string(options.layout.count));
  for (std::size_t k = 0; k < options.layout.servers.size(); ++k) {
    auto* into = reinterpret_cast<std::byte*>(options.params.data() + shard.offset(k));
    receive_chunks(options.comm->link(options.layout.servers[k]), shard.length(k) * sizeof(float),
                   tag, phase_pull, ctx, options.chunk_bytes,
                   [&](const std::byte* piece, std::size_t bytes, std::size_t offset) {
                     std::memcpy(into + offset, piece, bytes);
                   });
  }
}

void ps_serve(const ps_serve_options& options) {
  op_context ctx;
  // The workers' push and pull are two ops; the server walks through both ids.
  const op_tag push_tag = begin_op(options, "ps serve", ctx);
  const op_tag pull_tag{push_tag.job, push_tag.generation, options.comm->next_op()};
  const std::size_t k = shard_index(options.layout, options.comm->rank());
  const std::size_t length = options.layout.shard_length(k);
  if (options.shard.size() != length)
    throw input_error("ps serve: shard has " + std::to_string(options.shard.size()) +
                      " values, layout gives this server " + std::to_string(length));
  std::vector<float> gradient_sum(length, 0.0f);
  for (int worker : options.layout.workers)
    receive_chunks(
        options.comm->link(worker), length * sizeof(float), push_tag, phase_push, ctx,
        options.chunk_bytes, [&](const std::byte* piece, std::size_t bytes, std::size_t offset) {
          add_into(gradient_sum.data() + offset / sizeof(float), piece, bytes / sizeof(float));
        });
  if (options.apply) options.apply(options.shard, gradient_sum);
  const close_on_throw guard{*options.comm};
  for (int worker : options.layout.workers)
    post_chunks(options.comm->link(worker),
                reinterpret_cast<const std::byte*>(options.shard.data()), length * sizeof(float),
                pull_tag, phase_pull, ctx, options.chunk_bytes);
  for (int worker : options.layout.workers) options.comm->link(worker).flush(ctx);
}

}  // namespace troupe::collectives
