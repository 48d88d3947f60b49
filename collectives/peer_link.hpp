#pragma once
// The transport axis (STYLE habit 5): one peer_link connects this rank to one other rank and
// carries tagged messages. Algorithms (allreduce, broadcast, ...) see nothing else, so every
// algorithm runs over every transport: in-process, ZeroMQ tcp/ipc, shared memory.
//
// A message is a small header plus raw payload bytes. The header's tag fields (job, generation, op,
// phase, step, chunk) say exactly which piece of which operation it is; a receiver asks for one
// tag and gets exactly that message. Messages from an older (generation, op) are leftovers of an
// aborted operation and are dropped; messages from a newer one are kept until asked for.
//
// Sends are posted, not blocking: post() hands the payload over and returns a ticket; the
// payload must stay valid and unchanged until wait_sent(ticket) or flush() returns. This lets a
// ring post to its right neighbour and receive from its left one without deadlock, and lets
// transports send without copying (the in-process link gives the receiver the sender's pointer).
#include <cstddef>
#include <cstdint>
#include <functional>

#include "collectives/errors.hpp"
#include "collectives/op_control.hpp"

namespace troupe::collectives {

struct message_header {
  std::uint64_t job = 0;
  std::uint64_t generation = 0;
  std::uint32_t op = 0;     // sequence number of the operation on its communicator
  std::uint32_t phase = 0;  // part of the op: reduce-scatter, allgather, a hierarchy level, ...
  std::uint32_t step = 0;   // ring step inside the phase
  std::uint32_t chunk = 0;  // chunk index inside the step's segment
  std::uint64_t bytes = 0;  // payload size

  bool same_tag(const message_header& o) const {
    return job == o.job && generation == o.generation && op == o.op && phase == o.phase &&
           step == o.step && chunk == o.chunk;
  }
  // True when this message belongs to an operation older than `current` of the same job: it is a
  // leftover of an aborted op and can never be asked for again.
  bool older_than(const message_header& current) const {
    if (job != current.job) return false;
    if (generation != current.generation) return generation < current.generation;
    return op < current.op;
  }
};

// Receives the payload of one message, possibly in several pieces (a shared-memory ring hands
// over one slot at a time). `offset` is where the piece starts inside the payload, `total` the
// payload size. Pieces arrive in order and always start at a multiple of 64 bytes of the payload,
// but the address may have any alignment (ZeroMQ's usually is not 4-byte aligned): read typed
// values with memcpy, as add_into does.
using consume_fn = std::function<void(const std::byte* piece, std::size_t bytes, std::size_t offset,
                                      std::size_t total)>;

// Throws collective_error(protocol) naming `from` when a payload has the wrong size.
void expect_payload_size(std::size_t total, std::size_t expected, const peer_info& from,
                         const op_context& ctx);

class peer_link {
 public:
  virtual ~peer_link() = default;

  virtual const peer_info& peer() const = 0;

  // Starts sending; returns a ticket for wait_sent. Never blocks on the peer.
  virtual std::uint64_t post(const message_header& header, const void* payload,
                             const op_context& ctx) = 0;
  // Waits until the payload of `ticket` has been handed over and may be changed again.
  virtual void wait_sent(std::uint64_t ticket, const op_context& ctx) = 0;
  // Waits until every posted payload has been handed over.
  virtual void flush(const op_context& ctx) = 0;

  // Waits for the message tagged like `expect` (bytes ignored) and passes its payload to
  // `consume`; returns its header.
  virtual message_header receive(const message_header& expect, const consume_fn& consume,
                                 const op_context& ctx) = 0;

  // Like receive, for a payload that is copied as is into `into` (exactly `bytes` long; a size
  // mismatch is a protocol error). Transports that can place the bytes there directly (shared
  // memory reads the sender's buffer into it) override it; the default copies via receive().
  virtual message_header receive_into(const message_header& expect, std::byte* into,
                                      std::size_t bytes, const op_context& ctx);

  // Throws collective_error(peer_closed) when the message tagged like `expect` can no longer
  // come: the peer is known gone (closed its link, its process dead) and nothing of it waits
  // here. Cheap, for an op that waits on another link meanwhile (op_context::watch). A peer that
  // sent its part and then closed (it finished) does not fail it.
  virtual void check_open(const message_header& expect, const op_context& ctx) {
    (void)expect;
    (void)ctx;
  }

  // Tells the peer we are gone; its waits on us fail with peer_closed. Idempotent.
  virtual void close() = 0;
};

}  // namespace troupe::collectives
