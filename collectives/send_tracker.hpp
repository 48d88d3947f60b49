#pragma once
// Bookkeeping of posted payloads that are not yet handed over, shared by the transports. The
// completing side (a receiver thread, ZeroMQ's I/O thread, a sender thread) calls complete();
// the posting side waits in slices so that aborts and deadlines are noticed.
// This class is thread-safe.
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <unordered_set>

#include "collectives/op_control.hpp"

namespace troupe::collectives {

class send_tracker {
 public:
  std::uint64_t begin() {
    std::lock_guard<std::mutex> guard{mutex_};
    const auto ticket = next_++;
    pending_.insert(ticket);
    return ticket;
  }

  void complete(std::uint64_t ticket) {
    {
      std::lock_guard<std::mutex> guard{mutex_};
      pending_.erase(ticket);
    }
    changed_.notify_all();
  }

  // Fails every outstanding send (the link closed); waiters then see `failed()`.
  void fail_all() {
    {
      std::lock_guard<std::mutex> guard{mutex_};
      failed_ = true;
    }
    changed_.notify_all();
  }
  bool idle() const {
    std::lock_guard<std::mutex> guard{mutex_};
    return pending_.empty();
  }
  bool failed() const {
    std::lock_guard<std::mutex> guard{mutex_};
    return failed_;
  }

  void wait(std::uint64_t ticket, const op_context& ctx, const peer_info& peer) {
    wait_until([&] { return pending_.count(ticket) == 0; }, ctx, peer);
  }
  void wait_all(const op_context& ctx, const peer_info& peer) {
    wait_until([&] { return pending_.empty(); }, ctx, peer);
  }

 private:
  template <class Pred>
  void wait_until(Pred done, const op_context& ctx, const peer_info& peer) {
    std::unique_lock<std::mutex> lock{mutex_};
    while (!done()) {
      if (failed_)
        throw collective_error(
            failure_kind::peer_closed, peer,
            ctx.op_name + ": link closed before data reached " + peer.describe());
      lock.unlock();
      ctx.check(peer, "the hand-over of data to");
      lock.lock();
      if (done()) break;
      changed_.wait_until(lock, ctx.slice_end());
    }
  }

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::unordered_set<std::uint64_t> pending_;
  std::uint64_t next_ = 1;
  bool failed_ = false;
};

}  // namespace troupe::collectives
