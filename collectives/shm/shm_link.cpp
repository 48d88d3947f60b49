#include "collectives/shm/shm_link.hpp"

#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "collectives/send_tracker.hpp"
#include "collectives/shm/shm_ring.hpp"
#include "core/hash.hpp"

namespace troupe::collectives {
namespace {

constexpr long slice_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(wait_slice).count();

class shm_link final : public peer_link {
 public:
  shm_link(shm::segment incoming, shm::segment outgoing, peer_info peer)
      : in_(std::move(incoming)), out_(std::move(outgoing)), peer_(std::move(peer)) {
    sender_ = std::thread([this] { drain_posts(); });
  }
  ~shm_link() override { close(); }

  const peer_info& peer() const override { return peer_; }

  std::uint64_t post(const message_header& header, const void* payload,
                     const op_context& ctx) override {
    if (closed_ || tracker_.failed())
      throw collective_error(failure_kind::peer_closed, peer_,
                             ctx.op_name + ": link to " + peer_.describe() + " is closed");
    const auto ticket = tracker_.begin();
    {
      std::lock_guard<std::mutex> guard{mutex_};
      posts_.push_back({header, static_cast<const std::byte*>(payload), ticket});
    }
    posted_.notify_one();
    return ticket;
  }

  void wait_sent(std::uint64_t ticket, const op_context& ctx) override {
    tracker_.wait(ticket, ctx, peer_);
  }
  void flush(const op_context& ctx) override { tracker_.wait_all(ctx, peer_); }

  message_header receive(const message_header& expect, const consume_fn& consume,
                         const op_context& ctx) override {
    for (auto it = stash_.begin(); it != stash_.end(); ++it)
      if (it->header.same_tag(expect)) {
        const auto found = std::move(*it);
        stash_.erase(it);
        if (!found.payload.empty())
          consume(found.payload.data(), found.payload.size(), 0, found.payload.size());
        return found.header;
      }
    for (;;) {
      // The first slot of the next message tells what it is.
      const shm::slot_header first = *next_slot(ctx);
      const message_header header = first.header;
      if (header.same_tag(expect)) {
        read_pieces(header, ctx, [&](const std::byte* piece, std::size_t bytes, std::size_t at) {
          consume(piece, bytes, at, static_cast<std::size_t>(header.bytes));
        });
        return header;
      }
      if (header.older_than(expect)) {  // leftover of an aborted op
        read_pieces(header, ctx, [](const std::byte*, std::size_t, std::size_t) {});
        continue;
      }
      stashed keep{header, std::vector<std::byte>(static_cast<std::size_t>(header.bytes))};
      read_pieces(header, ctx, [&](const std::byte* piece, std::size_t bytes, std::size_t at) {
        std::memcpy(keep.payload.data() + at, piece, bytes);
      });
      stash_.push_back(std::move(keep));
    }
  }

  // Stops the sender thread (so no user buffer is read after close returns) and tells the peer.
  void close() override {
    if (closed_.exchange(true)) return;
    {
      std::lock_guard<std::mutex> guard{mutex_};
      stopping_ = true;
    }
    posted_.notify_one();
    if (sender_.joinable()) sender_.join();
    out_.control().closed.fetch_or(shm::sender_closed);
    in_.control().closed.fetch_or(shm::receiver_closed);
    shm::futex_wake(out_.control().written);
    shm::futex_wake(in_.control().consumed);
    tracker_.fail_all();
    in_.unlink_name();  // in case the peer never came to open it
  }

 private:
  struct post_entry {
    message_header header;
    const std::byte* payload;
    std::uint64_t ticket;
  };
  struct stashed {
    message_header header;
    std::vector<std::byte> payload;
  };

  // Waits until the incoming ring has a full slot and returns its header.
  const shm::slot_header* next_slot(const op_context& ctx) {
    shm::ring_control& ring = in_.control();
    for (;;) {
      const std::uint32_t written = ring.written.load(std::memory_order_acquire);
      const std::uint32_t consumed = ring.consumed.load(std::memory_order_relaxed);
      if (written != consumed) return &in_.header_of(consumed % ring.slots);
      if (ring.closed.load() & shm::sender_closed)
        throw collective_error(failure_kind::peer_closed, peer_,
                               ctx.op_name + ": " + peer_.describe() +
                                   " closed its link before sending the expected data");
      if (!shm::process_alive(ring.sender_pid.load()))
        throw collective_error(failure_kind::peer_closed, peer_,
                               ctx.op_name + ": the process of " + peer_.describe() + " is gone");
      ctx.check(peer_, "data from");
      shm::futex_wait(ring.written, written, slice_ns);
    }
  }

  // Hands every piece of the message whose first slot is next to `into`, freeing each slot.
  template <class Into>
  void read_pieces(const message_header& header, const op_context& ctx, Into into) {
    shm::ring_control& ring = in_.control();
    std::size_t received = 0;
    do {
      const shm::slot_header* slot = next_slot(ctx);
      const std::uint32_t index = ring.consumed.load(std::memory_order_relaxed) % ring.slots;
      if (!slot->header.same_tag(header) || slot->piece_offset != received)
        throw collective_error(failure_kind::protocol, peer_,
                               ctx.op_name + ": torn message in the ring from " + peer_.describe());
      const auto bytes = static_cast<std::size_t>(slot->piece_bytes);
      if (bytes > 0) into(in_.payload_of(index), bytes, received);
      received += bytes;
      ring.consumed.fetch_add(1, std::memory_order_release);
      shm::futex_wake(ring.consumed);
    } while (received < header.bytes);
  }

  // The sender thread: copies posted messages into the outgoing ring, slot by slot.
  void drain_posts() {
    shm::ring_control& ring = out_.control();
    for (;;) {
      post_entry next;
      {
        std::unique_lock<std::mutex> lock{mutex_};
        posted_.wait(lock, [&] { return stopping_ || !posts_.empty(); });
        if (stopping_) return;
        next = posts_.front();
        posts_.pop_front();
      }
      std::size_t sent = 0;
      do {
        if (!wait_for_room(ring)) return;
        const std::uint32_t index = ring.written.load(std::memory_order_relaxed) % ring.slots;
        const std::size_t bytes = std::min<std::size_t>(
            ring.slot_bytes, static_cast<std::size_t>(next.header.bytes) - sent);
        shm::slot_header& slot = out_.header_of(index);
        slot.header = next.header;
        slot.piece_offset = sent;
        slot.piece_bytes = bytes;
        if (bytes > 0) std::memcpy(out_.payload_of(index), next.payload + sent, bytes);
        sent += bytes;
        ring.written.fetch_add(1, std::memory_order_release);
        shm::futex_wake(ring.written);
      } while (sent < next.header.bytes);
      tracker_.complete(next.ticket);
    }
  }

  // False when the link is stopping or the receiver is gone (then every send fails).
  bool wait_for_room(shm::ring_control& ring) {
    for (;;) {
      const std::uint32_t consumed = ring.consumed.load(std::memory_order_acquire);
      if (ring.written.load(std::memory_order_relaxed) - consumed < ring.slots) return true;
      {
        std::lock_guard<std::mutex> guard{mutex_};
        if (stopping_) return false;
      }
      if ((ring.closed.load() & shm::receiver_closed) ||
          !shm::process_alive(ring.receiver_pid.load())) {
        tracker_.fail_all();
        return false;
      }
      shm::futex_wait(ring.consumed, consumed, slice_ns);
    }
  }

  shm::segment in_;   // we receive here (we created it)
  shm::segment out_;  // we send here (the peer created it)
  peer_info peer_;
  send_tracker tracker_;
  std::mutex mutex_;
  std::condition_variable posted_;
  std::deque<post_entry> posts_;
  bool stopping_ = false;
  std::atomic<bool> closed_{false};
  std::deque<stashed> stash_;
  std::thread sender_;
};

std::string key_for(const std::string& prefix, int from, int to) {
  return prefix + "/shm/" + std::to_string(from) + "->" + std::to_string(to);
}

std::string segment_name(const std::string& prefix, int from, int to) {
  static std::atomic<unsigned> serial{0};
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(fnv1a64(prefix.data(), prefix.size())));
  return "/troupe-" + std::to_string(::getpid()) + "-" + hash + "-" + std::to_string(from) + "-" +
         std::to_string(to) + "-" + std::to_string(serial++);
}

}  // namespace

communicator shm_connect(const shm_connect_options& options) {
  if (!options.rendezvous) throw input_error("shm_connect: no rendezvous store");
  if (options.slot_bytes < 64 || options.slot_bytes % 64 != 0 || options.slots < 2)
    throw input_error("shm_connect: slot_bytes must be a multiple of 64 and slots at least 2");
  std::vector<int> peers = options.peers;
  if (peers.empty() && options.size > 1) {
    peers.push_back(right_of(options.rank, options.size));
    if (left_of(options.rank, options.size) != peers.front())
      peers.push_back(left_of(options.rank, options.size));
  }
  std::vector<shm::segment> incoming;
  for (int peer : peers) {
    const std::string name = segment_name(options.prefix, peer, options.rank);
    incoming.push_back(shm::segment::create(name, static_cast<std::uint32_t>(options.slots),
                                            static_cast<std::uint32_t>(options.slot_bytes)));
    options.rendezvous->set(key_for(options.prefix, peer, options.rank), name);
  }
  std::vector<std::shared_ptr<peer_link>> links(static_cast<std::size_t>(options.size));
  for (std::size_t i = 0; i < peers.size(); ++i) {
    const int peer = peers[i];
    std::string name;
    try {
      name = options.rendezvous->wait_get(key_for(options.prefix, options.rank, peer),
                                          options.deadline);
    } catch (const runtime_failure&) {
      throw runtime_failure("shm_connect: rank " + std::to_string(peer) +
                            " never published its segment (rank " + std::to_string(options.rank) +
                            " waited until the deadline)");
    }
    shm::segment outgoing = shm::segment::open(name);
    outgoing.unlink_name();  // both sides have it mapped now (the creator mapped it first)
    links[static_cast<std::size_t>(peer)] = std::make_shared<shm_link>(
        std::move(incoming[i]), std::move(outgoing), peer_info{peer, "shm:" + name});
  }
  return communicator{options.rank, options.size, std::move(links)};
}

}  // namespace troupe::collectives
