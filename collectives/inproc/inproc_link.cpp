#include "collectives/inproc/inproc_link.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "collectives/send_tracker.hpp"

namespace troupe::collectives {
namespace {

// A posted message: the sender's header and pointer, and how to tell the sender it is done.
struct envelope {
  message_header header;
  const std::byte* payload = nullptr;
  std::uint64_t ticket = 0;
};

// The one-way channel from one rank to another.
struct channel {
  std::mutex mutex;
  std::condition_variable arrived;
  std::deque<envelope> queue;
  std::size_t reading = 0;  // receivers reading a sender's buffer right now
  bool closed = false;
  std::shared_ptr<send_tracker> sender_tracker = std::make_shared<send_tracker>();
};

}  // namespace

class inproc_hub_state {
 public:
  explicit inproc_hub_state(int size)
      : size_(size), channels_(static_cast<std::size_t>(size) * static_cast<std::size_t>(size)) {
    for (auto& c : channels_) c = std::make_unique<channel>();
  }
  int size() const { return size_; }
  channel& from_to(int from, int to) {
    return *channels_[static_cast<std::size_t>(from) * static_cast<std::size_t>(size_) +
                      static_cast<std::size_t>(to)];
  }

 private:
  int size_;
  std::vector<std::unique_ptr<channel>> channels_;
};

namespace {

class inproc_link final : public peer_link {
 public:
  inproc_link(std::shared_ptr<inproc_hub_state> hub, int me, int peer)
      : hub_(std::move(hub)),
        peer_{peer, "inproc:" + std::to_string(peer)},
        outgoing_(hub_->from_to(me, peer)),
        incoming_(hub_->from_to(peer, me)) {}
  ~inproc_link() override { close(); }

  const peer_info& peer() const override { return peer_; }

  std::uint64_t post(const message_header& header, const void* payload,
                     const op_context& ctx) override {
    const auto ticket = outgoing_.sender_tracker->begin();
    {
      std::lock_guard<std::mutex> guard{outgoing_.mutex};
      if (outgoing_.closed)
        throw collective_error(
            failure_kind::peer_closed, peer_,
            ctx.op_name + ": cannot send, link to " + peer_.describe() + " is closed");
      outgoing_.queue.push_back({header, static_cast<const std::byte*>(payload), ticket});
    }
    outgoing_.arrived.notify_all();
    return ticket;
  }

  void wait_sent(std::uint64_t ticket, const op_context& ctx) override {
    outgoing_.sender_tracker->wait(ticket, ctx, peer_);
  }
  void flush(const op_context& ctx) override { outgoing_.sender_tracker->wait_all(ctx, peer_); }

  message_header receive(const message_header& expect, const consume_fn& consume,
                         const op_context& ctx) override {
    std::unique_lock<std::mutex> lock{incoming_.mutex};
    for (;;) {
      for (auto it = incoming_.queue.begin(); it != incoming_.queue.end();) {
        if (it->header.older_than(expect)) {
          // A leftover of an aborted op: release the sender and forget it.
          incoming_.sender_tracker->complete(it->ticket);
          it = incoming_.queue.erase(it);
          continue;
        }
        if (it->header.same_tag(expect)) {
          const envelope found = *it;
          incoming_.queue.erase(it);
          ++incoming_.reading;
          lock.unlock();
          // Read straight from the sender's buffer; the sender waits for complete() below
          // before it touches that buffer again.
          struct done_reading {
            channel& c;
            ~done_reading() {
              {
                std::lock_guard<std::mutex> guard{c.mutex};
                --c.reading;
              }
              c.arrived.notify_all();
            }
          } reading{incoming_};
          const auto bytes = static_cast<std::size_t>(found.header.bytes);
          if (bytes > 0) consume(found.payload, bytes, 0, bytes);
          incoming_.sender_tracker->complete(found.ticket);
          return found.header;
        }
        ++it;
      }
      if (incoming_.closed)
        throw collective_error(failure_kind::peer_closed, peer_,
                               ctx.op_name + ": " + peer_.describe() +
                                   " closed its link before sending the expected data");
      lock.unlock();
      ctx.check(peer_, "data from");
      lock.lock();
      incoming_.arrived.wait_until(lock, ctx.slice_end());
    }
  }

  void check_open(const message_header& expect, const op_context& ctx) override {
    std::lock_guard<std::mutex> guard{incoming_.mutex};
    for (const auto& waiting : incoming_.queue)
      if (waiting.header.same_tag(expect)) return;
    if (incoming_.closed)
      throw collective_error(failure_kind::peer_closed, peer_,
                             ctx.op_name + ": " + peer_.describe() + " closed its link");
  }

  // After close returns no peer reads our buffers: unread posts are withdrawn and a read in
  // progress is waited for (it is one memcpy or reduction of a chunk).
  void close() override {
    if (closed_) return;
    closed_ = true;
    {
      std::unique_lock<std::mutex> lock{outgoing_.mutex};
      outgoing_.queue.clear();
      outgoing_.arrived.wait(lock, [&] { return outgoing_.reading == 0; });
    }
    for (channel* c : {&outgoing_, &incoming_}) {
      {
        std::lock_guard<std::mutex> guard{c->mutex};
        c->closed = true;
      }
      c->arrived.notify_all();
    }
    // Whatever the peer posted to us will never be read now.
    incoming_.sender_tracker->fail_all();
  }

 private:
  std::shared_ptr<inproc_hub_state> hub_;
  peer_info peer_;
  channel& outgoing_;
  channel& incoming_;
  bool closed_ = false;
};

}  // namespace

inproc_hub::inproc_hub(int size)
    : rank_group(size, "inproc_hub"), state_(std::make_shared<inproc_hub_state>(size)) {}
inproc_hub::~inproc_hub() = default;

communicator inproc_hub::connect(int rank) {
  std::vector<std::shared_ptr<peer_link>> links(static_cast<std::size_t>(size()));
  for (int peer = 0; peer < size(); ++peer)
    if (peer != rank)
      links[static_cast<std::size_t>(peer)] = std::make_shared<inproc_link>(state_, rank, peer);
  return communicator{rank, size(), std::move(links)};
}

}  // namespace troupe::collectives
