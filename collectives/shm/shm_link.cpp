#include "collectives/shm/shm_link.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>

#include "collectives/shm/shm_ring.hpp"
#include "core/hash.hpp"
#include "core/secret.hpp"

namespace troupe::collectives {
namespace {

constexpr long slice_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(wait_slice).count();

// The ticket of an eager post: complete at once (descriptor tickets fit in 32 bits).
constexpr std::uint64_t eager_ticket = std::uint64_t{1} << 32;

// True when counter `done` has reached `target` (both modulo 2^32).
bool reached(std::uint32_t done, std::uint32_t target) {
  return static_cast<std::int32_t>(done - target) >= 0;
}

class shm_link final : public peer_link {
 public:
  shm_link(shm::segment incoming, shm::segment outgoing, peer_info peer, std::size_t piece_bytes)
      : in_(std::move(incoming)),
        out_(std::move(outgoing)),
        peer_(std::move(peer)),
        bounce_(piece_bytes) {}
  ~shm_link() override { close(); }

  const peer_info& peer() const override { return peer_; }

  // Publishes a descriptor of the payload; the receiver copies the bytes itself. A small payload
  // goes into the descriptor's eager buffer when that is free (the buffer's previous descriptor
  // finished), so the post never waits for it; otherwise it is read from `payload`.
  std::uint64_t post(const message_header& header, const void* payload,
                     const op_context& ctx) override {
    shm::ring_control& ring = out_.control();
    std::uint32_t consumed = 0;
    for (;;) {  // room in the descriptor ring (full only with `slots` posts outstanding)
      consumed = ring.consumed.load(std::memory_order_acquire);
      if (posted_ - consumed < out_.slots()) break;
      check_sending(ctx, "room in the ring to");  // a system call: only where we must wait
      shm::futex_wait(ring.consumed, ring.consumed_sleepers, consumed, slice_ns);
    }
    shm::descriptor& d = out_.slot(posted_);
    d.header = header;
    const bool eager =
        header.bytes <= out_.eager_bytes() && posted_ - consumed < out_.eager_slots();
    if (eager) {
      if (header.bytes > 0)
        std::memcpy(out_.eager(posted_), payload, static_cast<std::size_t>(header.bytes));
      d.address = 0;
    } else {
      d.address = reinterpret_cast<std::uint64_t>(payload);
    }
    d.eager = eager ? 1 : 0;
    ++posted_;
    if (!eager) last_read_in_place_ = posted_;
    ring.written.store(posted_, std::memory_order_release);
    shm::futex_wake(ring.written, ring.written_sleepers);
    return eager ? eager_ticket : posted_;
  }

  void wait_sent(std::uint64_t ticket, const op_context& ctx) override {
    if (ticket & eager_ticket) return;  // copied at post
    shm::ring_control& ring = out_.control();
    for (;;) {
      const std::uint32_t consumed = ring.consumed.load(std::memory_order_acquire);
      if (reached(consumed, static_cast<std::uint32_t>(ticket))) return;
      check_sending(ctx, "the hand-over of data to");
      shm::futex_wait(ring.consumed, ring.consumed_sleepers, consumed, slice_ns);
    }
  }
  void flush(const op_context& ctx) override { wait_sent(last_read_in_place_, ctx); }

  message_header receive(const message_header& expect, const consume_fn& consume,
                         const op_context& ctx) override {
    if (auto found = from_stash(expect)) {
      if (!found->payload.empty())
        consume(found->payload.data(), found->payload.size(), 0, found->payload.size());
      return found->header;
    }
    for (;;) {
      const shm::descriptor d = next_descriptor(expect, ctx);
      if (!d.header.same_tag(expect)) continue;  // stashed by next_descriptor
      const auto total = static_cast<std::size_t>(d.header.bytes);
      if (d.eager) {
        if (total > 0) consume(eager_payload(d, ctx), total, 0, total);
        finish_descriptor();
        return d.header;
      }
      // Pieces of the size of the bounce buffer stay in cache between the copy and the consumer.
      for (std::size_t offset = 0; offset < total; offset += bounce_.size()) {
        const std::size_t bytes = std::min(bounce_.size(), total - offset);
        copy_from_sender(bounce_.data(), d.address + offset, bytes, ctx);
        consume(bounce_.data(), bytes, offset, total);
      }
      finish_descriptor();
      return d.header;
    }
  }

  message_header receive_into(const message_header& expect, std::byte* into, std::size_t bytes,
                              const op_context& ctx) override {
    if (auto found = from_stash(expect)) {
      expect_payload_size(found->payload.size(), bytes, peer_, ctx);
      std::memcpy(into, found->payload.data(), bytes);
      return found->header;
    }
    for (;;) {
      const shm::descriptor d = next_descriptor(expect, ctx);
      if (!d.header.same_tag(expect)) continue;
      expect_payload_size(static_cast<std::size_t>(d.header.bytes), bytes, peer_, ctx);
      copy_payload(d, into, ctx);  // the one copy, straight to its place
      finish_descriptor();
      return d.header;
    }
  }

  void check_open(const message_header& expect, const op_context& ctx) override {
    if (in_.control().written.load(std::memory_order_acquire) != received_) return;  // unread
    for (const auto& kept : stash_)
      if (kept.header.same_tag(expect)) return;
    const std::uint32_t in_closed = in_.control().closed.load();
    const std::uint32_t out_closed = out_.control().closed.load();
    if ((in_closed & shm::sender_closed) || (out_closed & shm::receiver_closed))
      throw collective_error(failure_kind::peer_closed, peer_,
                             ctx.op_name + ": " + peer_.describe() + " closed its link");
    if (!shm::process_alive(in_.control().sender_pid.load()))
      throw collective_error(failure_kind::peer_closed, peer_,
                             ctx.op_name + ": the process of " + peer_.describe() + " is gone");
  }

  void close() override {
    if (closed_) return;
    closed_ = true;
    out_.control().closed.fetch_or(shm::sender_closed);
    in_.control().closed.fetch_or(shm::receiver_closed);
    shm::futex_wake_all(out_.control().written);
    shm::futex_wake_all(in_.control().consumed);
    in_.unlink_name();  // in case the peer never came to open it
  }

 private:
  struct stashed {
    message_header header;
    std::vector<std::byte> payload;
  };

  std::optional<stashed> from_stash(const message_header& expect) {
    for (auto it = stash_.begin(); it != stash_.end(); ++it)
      if (it->header.same_tag(expect)) {
        stashed found = std::move(*it);
        stash_.erase(it);
        return found;
      }
    return std::nullopt;
  }

  void check_sending(const op_context& ctx, const char* waiting_for) const {
    const shm::ring_control& ring = out_.control();
    if (closed_ || (ring.closed.load() & shm::receiver_closed))
      throw collective_error(
          failure_kind::peer_closed, peer_,
          ctx.op_name + ": " + peer_.describe() + " closed its link before taking our data");
    if (!shm::process_alive(ring.receiver_pid.load()))
      throw collective_error(failure_kind::peer_closed, peer_,
                             ctx.op_name + ": the process of " + peer_.describe() + " is gone");
    ctx.check(peer_, waiting_for);
  }

  // Waits for the next descriptor. One that is not `expect` is dealt with here: a leftover of
  // an older op is dropped, one of a later op is copied into the stash; the caller then loops.
  shm::descriptor next_descriptor(const message_header& expect, const op_context& ctx) {
    shm::ring_control& ring = in_.control();
    for (;;) {
      const std::uint32_t written = ring.written.load(std::memory_order_acquire);
      if (written != received_) break;
      if (ring.closed.load() & shm::sender_closed)
        throw collective_error(failure_kind::peer_closed, peer_,
                               ctx.op_name + ": " + peer_.describe() +
                                   " closed its link before sending the expected data");
      if (!shm::process_alive(ring.sender_pid.load()))
        throw collective_error(failure_kind::peer_closed, peer_,
                               ctx.op_name + ": the process of " + peer_.describe() + " is gone");
      ctx.check(peer_, "data from");
      shm::futex_wait(ring.written, ring.written_sleepers, written, slice_ns);
    }
    const shm::descriptor d = in_.slot(received_);
    if (d.header.same_tag(expect)) return d;
    if (!d.header.older_than(expect)) {
      stashed keep{d.header, std::vector<std::byte>(static_cast<std::size_t>(d.header.bytes))};
      copy_payload(d, keep.payload.data(), ctx);
      stash_.push_back(std::move(keep));
    }
    finish_descriptor();
    return d;
  }

  // The eager buffer of the descriptor being received; one that cannot be there is the peer's
  // protocol fault (the size field is the peer's to write).
  const std::byte* eager_payload(const shm::descriptor& d, const op_context& ctx) const {
    if (in_.eager_slots() == 0 || d.header.bytes > in_.eager_bytes())
      throw collective_error(failure_kind::protocol, peer_,
                             ctx.op_name + ": " + peer_.describe() + " sent " +
                                 std::to_string(d.header.bytes) +
                                 " bytes in an eager buffer that holds " +
                                 std::to_string(in_.eager_slots() ? in_.eager_bytes() : 0));
    return in_.eager(received_);
  }

  // The whole payload of the descriptor being received, from its eager buffer or the sender.
  void copy_payload(const shm::descriptor& d, void* into, const op_context& ctx) {
    const auto bytes = static_cast<std::size_t>(d.header.bytes);
    if (!d.eager)
      copy_from_sender(into, d.address, bytes, ctx);
    else if (bytes > 0)
      std::memcpy(into, eager_payload(d, ctx), bytes);
  }

  void copy_from_sender(void* into, std::uint64_t address, std::size_t bytes,
                        const op_context& ctx) {
    if (bytes == 0) return;
    const int error = shm::read_remote(in_.control().sender_pid.load(), into, address, bytes);
    if (error == ESRCH)
      throw collective_error(failure_kind::peer_closed, peer_,
                             ctx.op_name + ": the process of " + peer_.describe() + " is gone");
    if (error != 0)
      throw collective_error(failure_kind::protocol, peer_,
                             ctx.op_name + ": cannot read the data of " + peer_.describe() + ": " +
                                 std::strerror(error) +
                                 " (cross-memory attach refused, or the buffer was freed)");
  }

  // The sender may reuse the payload of this descriptor now.
  void finish_descriptor() {
    ++received_;
    in_.control().consumed.store(received_, std::memory_order_release);
    shm::futex_wake(in_.control().consumed, in_.control().consumed_sleepers);
  }

  shm::segment in_;   // descriptors of the peer's messages to us (we created it)
  shm::segment out_;  // descriptors of ours (the peer created it)
  peer_info peer_;
  std::vector<std::byte> bounce_;
  std::uint32_t posted_ = 0;              // descriptors we wrote
  std::uint32_t last_read_in_place_ = 0;  // the last of them whose payload the peer reads from us
  std::uint32_t received_ = 0;            // descriptors we finished
  std::deque<stashed> stash_;
  bool closed_ = false;
};

// Unpredictable (64 random bits), so that no other process of this host can make the name first
// or guess it; the pid leads, so that a later start can tell a dead creator's leftovers.
std::string segment_name(const std::string& prefix, int from, int to) {
  static std::atomic<unsigned> serial{0};
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(fnv1a64(prefix.data(), prefix.size())));
  return "/troupe-" + std::to_string(::getpid()) + "-" + hash + "-" + std::to_string(from) + "-" +
         std::to_string(to) + "-" + std::to_string(serial++) + "-" + random_hex(8);
}

}  // namespace

communicator shm_connect(const shm_connect_options& options) {
  if (!options.rendezvous) throw input_error("shm_connect: no rendezvous store");
  static std::once_flag swept;
  std::call_once(swept, [] { shm::remove_stale_segments(); });
  if (options.piece_bytes < 64 || options.piece_bytes % 64 != 0 || options.slots < 2 ||
      options.mesh_slots < 2 || options.slots > (1u << 30) || options.mesh_slots > (1u << 30))
    throw input_error(
        "shm_connect: piece_bytes must be a multiple of 64, slots and mesh_slots 2 to 2^30");
  // A power of two, so that buffer `sequence % eager_slots` stays in step when the 32-bit
  // sequence numbers wrap.
  if (options.eager_bytes % 64 != 0 || options.eager_bytes > (1u << 30) ||
      options.eager_slots > 1024 || (options.eager_slots & (options.eager_slots - 1)) != 0)
    throw input_error(
        "shm_connect: eager_bytes must be a multiple of 64 up to 1 GiB, eager_slots a power of "
        "two up to 1024 (or 0)");
  const std::vector<int> peers =
      options.peers.empty() ? default_peers(options.rank, options.size) : options.peers;
  const std::vector<int> neighbours = ring_peers(options.rank, options.size);
  std::vector<shm::segment> incoming;
  for (int peer : peers) {
    const std::string name = segment_name(options.prefix, peer, options.rank);
    // Both ends size the link alike: being ring neighbours is symmetric.
    const bool ring_link =
        std::find(neighbours.begin(), neighbours.end(), peer) != neighbours.end();
    incoming.push_back(shm::segment::create(
        name, static_cast<std::uint32_t>(ring_link ? options.slots : options.mesh_slots),
        static_cast<std::uint32_t>(options.eager_slots),
        static_cast<std::uint32_t>(options.eager_bytes)));
    publish_end(options, "shm", peer, name);
  }
  std::vector<std::shared_ptr<peer_link>> links(static_cast<std::size_t>(options.size));
  for (std::size_t i = 0; i < peers.size(); ++i) {
    const int peer = peers[i];
    const std::string name = await_peer_end(options, "shm", peer, "shm_connect", "its segment");
    shm::segment outgoing = [&] {
      try {
        return shm::segment::open(name);
      } catch (const runtime_failure& e) {
        // The creator unlinks its segments when it exits: a gone name means a gone peer.
        throw collective_error(failure_kind::peer_closed, peer_info{peer, "shm:" + name},
                               std::string{"shm_connect: rank "} + std::to_string(peer) +
                                   " went away before rank " + std::to_string(options.rank) +
                                   " mapped its segment (" + e.what() + ")");
      }
    }();
    outgoing.unlink_name();  // both sides have it mapped now (the creator mapped it first)
    links[static_cast<std::size_t>(peer)] =
        std::make_shared<shm_link>(std::move(incoming[i]), std::move(outgoing),
                                   peer_info{peer, "shm:" + name}, options.piece_bytes);
  }
  return communicator{options.rank, options.size, std::move(links)};
}

bool cross_memory_attach_allowed() {
  std::FILE* f = std::fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
  if (!f) return true;  // no Yama: same-user access is the kernel's default rule
  int scope = 1;
  const bool read = std::fscanf(f, "%d", &scope) == 1;
  std::fclose(f);
  return read && scope == 0;
}

}  // namespace troupe::collectives
