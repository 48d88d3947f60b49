#pragma once
// Deadlines and aborts for one collective operation. Transports wait in short slices and check
// the op_context between slices, so an abort from another thread or a passed deadline ends any
// wait within one slice (a few milliseconds), and nothing waits forever.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "collectives/errors.hpp"
#include "core/clock.hpp"

namespace troupe::collectives {

// Set from any thread (a job that bumps its generation) to stop the operations that hold it.
// This class is thread-safe.
class abort_signal {
 public:
  void abort(std::string reason) {
    {
      std::lock_guard<std::mutex> guard{mutex_};
      if (aborted_.load()) return;
      reason_ = std::move(reason);
    }
    aborted_.store(true, std::memory_order_release);
  }
  bool aborted() const { return aborted_.load(std::memory_order_acquire); }
  std::string reason() const {
    std::lock_guard<std::mutex> guard{mutex_};
    return reason_;
  }

 private:
  std::atomic<bool> aborted_{false};
  mutable std::mutex mutex_;
  std::string reason_;
};

// The longest a transport sleeps before looking at the abort flag and the deadline again.
constexpr std::chrono::milliseconds wait_slice{2};

struct op_context {
  std::string op_name = "collective";  // "allreduce", "broadcast": the prefix of error messages
  steady::time_point deadline = steady::time_point::max();
  std::shared_ptr<const abort_signal> abort;
  // Raised when a process this op depends on is known gone (an agent the registry lost), where
  // the transport itself cannot tell (a peer cut off keeps its sockets open): the op fails as
  // with a closed peer, not as an abort, so its caller treats it as a failure of its own.
  std::shared_ptr<const abort_signal> gone;
  // Other links this op depends on while it waits on one (an op that hears from every member,
  // not only from ring neighbours): throws when one of them is known closed, so that the wait
  // on a silent peer does not outlast a peer that has gone. Called at each check.
  std::function<void()> watch;

  // The end of the next wait slice: never past the deadline.
  steady::time_point slice_end() const {
    auto next = steady::now() + wait_slice;
    return next < deadline ? next : deadline;
  }

  // Throws collective_error naming `peer` when the op was aborted or its deadline passed;
  // `waiting_for` says what we were doing ("data from", "room at").
  void check(const peer_info& peer, const char* waiting_for) const {
    if (abort && abort->aborted())
      throw collective_error(failure_kind::aborted, peer,
                             op_name + ": aborted (" + abort->reason() + ") while waiting for " +
                                 waiting_for + " " + peer.describe());
    if (gone && gone->aborted())
      throw collective_error(failure_kind::peer_closed, peer,
                             op_name + ": " + gone->reason() + ", while waiting for " +
                                 waiting_for + " " + peer.describe());
    if (watch) watch();  // a peer known gone says more than a deadline that passed meanwhile
    if (steady::now() >= deadline)
      throw collective_error(
          failure_kind::timeout, peer,
          op_name + ": timed out waiting for " + waiting_for + " " + peer.describe());
  }
};

// Deadline helper for callers: now + d.
inline steady::time_point deadline_in(std::chrono::milliseconds d) {
  return steady::now() + d;
}

// Polls `ready` for up to 50 us, yielding the core between polls, before the caller sleeps on
// its condition variable or futex. The other side is usually microseconds behind, and a sleep
// costs a wake-up of 50-150 us on a loaded VM, paid at every barrier or ring step; yielding lets
// a peer that waits for a core (more ranks than cores) have it. 200 us polled longer than it
// saved. True once `ready()` held; false: sleep as before.
template <class Ready>
bool poll_briefly(Ready&& ready) {
  const auto until = steady::now() + std::chrono::microseconds(50);
  for (;;) {
    if (ready()) return true;
    if (steady::now() >= until) return false;
    std::this_thread::yield();
  }
}

}  // namespace troupe::collectives
