#include "collectives/block_allreduce.hpp"

#include <cstring>
#include <string>

#include "collectives/awaited.hpp"
#include "collectives/communicator.hpp"
#include "collectives/errors.hpp"
#include "collectives/inproc/reduce_kernel.hpp"
#include "collectives/segments.hpp"

namespace troupe::collectives {
namespace {

// A rank's round-1 message: its samples, its block count, then each block's index.
struct holding {
  std::uint64_t samples = 0;
  std::vector<std::uint32_t> index;
};

std::vector<std::uint64_t> encode(const block_allreduce_options& o) {
  std::vector<std::uint64_t> words{o.samples, o.index.size()};
  words.insert(words.end(), o.index.begin(), o.index.end());
  return words;
}

holding decode(const std::vector<std::uint64_t>& words, const peer_info& from,
               const op_context& ctx) {
  if (words.size() < 2 || words[1] != words.size() - 2)
    throw collective_error(failure_kind::protocol, from,
                           ctx.op_name + ": " + from.describe() + " sent a malformed block list");
  holding h;
  h.samples = words[0];
  for (std::size_t i = 2; i < words.size(); ++i) {
    if (words[i] > UINT32_MAX)
      throw collective_error(
          failure_kind::protocol, from,
          ctx.op_name + ": " + from.describe() + " named block " + std::to_string(words[i]));
    h.index.push_back(static_cast<std::uint32_t>(words[i]));
  }
  return h;
}

}  // namespace

block_allreduce_result block_allreduce(const block_allreduce_options& o) {
  op_context op_ctx;
  const op_tag tag = begin_op(o, "block allreduce", op_ctx);
  communicator& comm = *o.comm;
  if (o.blocks.size() != o.index.size())
    throw input_error("block allreduce: " + std::to_string(o.blocks.size()) + " blocks but " +
                      std::to_string(o.index.size()) + " indices");
  if (o.out.size() != o.count)
    throw input_error("block allreduce: out holds " + std::to_string(o.out.size()) +
                      " floats, count is " + std::to_string(o.count));
  const int n = comm.size();
  const int me = comm.rank();
  if (n > 1 && !fully_connected(comm))
    throw input_error("block allreduce: needs a link to every member (a full mesh)");
  // Round 1's message, declared before the guard: on a throw the links close (no transport reads
  // it any more) before it is freed.
  const std::vector<std::uint64_t> mine = encode(o);
  const close_on_throw guard{comm};
  awaited from{comm, op_ctx};
  const op_context& ctx = from.ctx();
  auto each_peer = [&](auto&& f) {
    for (int peer = 0; peer < n; ++peer)
      if (peer != me) f(peer, static_cast<std::size_t>(peer));
  };
  // Every payload posted (the caller's blocks, `mine`, `out`) stays alive and unchanged until the
  // flush at the end.
  auto post = [&](int peer, const message_header& h, const void* data) {
    comm.link(peer).post(h, data, ctx);
  };

  // Round 1: who holds which blocks.
  each_peer([&](int peer, std::size_t) {
    post(peer, tag.header(0, 0, 0, mine.size() * sizeof(std::uint64_t)), mine.data());
  });
  std::vector<holding> held(static_cast<std::size_t>(n));
  held[static_cast<std::size_t>(me)] = holding{o.samples, o.index};
  const message_header lists = tag.header(0, 0, 0, 0);
  each_peer([&](int peer, std::size_t) { from.expect(peer, lists); });
  each_peer([&](int peer, std::size_t p) {
    peer_link& link = comm.link(peer);
    std::vector<std::uint64_t> words;
    link.receive(
        lists,
        [&](const std::byte* piece, std::size_t got, std::size_t offset, std::size_t total) {
          if (total % sizeof(std::uint64_t) != 0 || total > (std::size_t{1} << 32))
            throw collective_error(failure_kind::protocol, link.peer(),
                                   ctx.op_name + ": " + link.peer().describe() +
                                       " sent a block list of " + std::to_string(total) + " bytes");
          if (offset == 0) words.assign(total / sizeof(std::uint64_t), 0);
          std::memcpy(reinterpret_cast<std::byte*>(words.data()) + offset, piece, got);
        },
        ctx);
    held[p] = decode(words, link.peer(), ctx);
    from.heard(peer);
  });

  // The step's blocks: each held by exactly one rank.
  block_allreduce_result result;
  std::size_t blocks = 0;
  for (const auto& h : held) {
    blocks += h.index.size();
    result.total_samples += h.samples;
  }
  std::vector<int> holder(blocks, -1);
  for (int r = 0; r < n; ++r)
    for (std::uint32_t b : held[static_cast<std::size_t>(r)].index) {
      const peer_info who = r == me ? peer_info{me, "this rank"} : comm.link(r).peer();
      if (b >= blocks || holder[b] >= 0)
        throw collective_error(
            failure_kind::protocol, who,
            ctx.op_name + ": " + who.describe() + " holds block " + std::to_string(b) + " of " +
                std::to_string(blocks) +
                (b < blocks ? ", which rank " + std::to_string(holder[b]) + " holds too" : ""));
      holder[b] = r;
    }
  if (blocks == 0 || result.total_samples == 0)
    throw collective_error(failure_kind::protocol, peer_info{me, "this rank"},
                           ctx.op_name + ": the step has " + std::to_string(blocks) +
                               " blocks and " + std::to_string(result.total_samples) + " samples");
  result.blocks = static_cast<std::uint32_t>(blocks);

  // Round 2: segment j of each of my blocks to its owner j, one message a block (its position
  // in my list as the chunk), straight from the block's buffer: no staging copy.
  const segments part{o.count, static_cast<std::size_t>(n)};
  const std::size_t own = o.index.size();
  auto block_tag = [&](std::size_t k, std::size_t bytes) {
    return tag.header(1, 0, static_cast<std::uint32_t>(k), bytes);
  };
  each_peer([&](int peer, std::size_t j) {
    const std::size_t len = part.length(j);
    if (len == 0) return;
    for (std::size_t k = 0; k < own; ++k)
      post(peer, block_tag(k, len * sizeof(float)), o.blocks[k] + part.offset(j));
  });
  const auto m = static_cast<std::size_t>(me);
  const std::size_t lo = part.offset(m), len = part.length(m);
  std::vector<const float*> ins(blocks, nullptr);
  std::vector<std::vector<float>> got(static_cast<std::size_t>(n));
  if (len > 0) {
    for (std::size_t k = 0; k < own; ++k) ins[o.index[k]] = o.blocks[k] + lo;
    auto theirs = [&](std::size_t p) { return held[p].index.size(); };
    each_peer([&](int peer, std::size_t p) {
      if (theirs(p) > 0) from.expect(peer, block_tag(0, 0));
    });
    each_peer([&](int peer, std::size_t p) {
      if (theirs(p) == 0) return;
      auto& g = got[p];
      g.resize(theirs(p) * len);
      for (std::size_t k = 0; k < theirs(p); ++k) {
        from.expect(peer, block_tag(k, 0));
        comm.link(peer).receive_into(block_tag(k, 0),
                                     reinterpret_cast<std::byte*>(g.data() + k * len),
                                     len * sizeof(float), ctx);
        ins[held[p].index[k]] = g.data() + k * len;
      }
      from.heard(peer);
    });
    reduce_spec spec;
    spec.divide = true;
    spec.divisor = static_cast<float>(result.total_samples);
    reduce_into(o.out.data() + lo, ins.data(), blocks, 0, len, spec);
  }

  // Round 3: my finished segment to everyone; theirs from each owner.
  if (len > 0)
    each_peer([&](int peer, std::size_t) {
      post(peer, tag.header(2, 0, 0, len * sizeof(float)), o.out.data() + lo);
    });
  each_peer([&](int peer, std::size_t j) {
    if (part.length(j) > 0) from.expect(peer, tag.header(2, 0, 0, 0));
  });
  each_peer([&](int peer, std::size_t j) {
    if (part.length(j) == 0) return;
    comm.link(peer).receive_into(tag.header(2, 0, 0, 0),
                                 reinterpret_cast<std::byte*>(o.out.data() + part.offset(j)),
                                 part.length(j) * sizeof(float), ctx);
    from.heard(peer);
  });
  for (int peer = 0; peer < n; ++peer)
    if (peer != me) comm.link(peer).flush(ctx);

  // What everyone sent: the lists, each rank's blocks' segments to the other owners, and each
  // owner's segment to the others.
  const std::uint64_t others = static_cast<std::uint64_t>(n - 1);
  for (std::size_t r = 0; r < held.size(); ++r) {
    const std::uint64_t k = held[r].index.size();
    result.wire_bytes += others * (2 + k) * sizeof(std::uint64_t);
    result.wire_bytes += k * (o.count - part.length(r)) * sizeof(float);
    result.wire_bytes += others * part.length(r) * sizeof(float);
  }
  return result;
}

}  // namespace troupe::collectives
