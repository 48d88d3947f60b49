#pragma once
// An op that hears from every member (not only from ring neighbours) waits on one link at a
// time; `awaited` watches the others meanwhile, so that a member known gone fails the op at once
// instead of when the wait comes to it. A member that has sent its part may close: it may simply
// have finished.
#include <cstddef>
#include <utility>
#include <vector>

#include "collectives/communicator.hpp"
#include "collectives/op_control.hpp"
#include "collectives/peer_link.hpp"

namespace troupe::collectives {

// The members this rank still waits to hear from, watched while it waits on any one of them.
class awaited {
 public:
  awaited(const communicator& comm, const op_context& ctx)
      : comm_(comm), waiting_(static_cast<std::size_t>(comm.size())), ctx_(ctx) {
    ctx_.watch = [this, &ctx] {
      for (int peer = 0; peer < comm_.size(); ++peer) {
        const auto& w = waiting_[static_cast<std::size_t>(peer)];
        if (w.first) comm_.link(peer).check_open(w.second, ctx);
      }
    };
  }
  awaited(const awaited&) = delete;
  awaited& operator=(const awaited&) = delete;

  const op_context& ctx() const { return ctx_; }
  void expect(int peer, const message_header& header) {
    waiting_[static_cast<std::size_t>(peer)] = {true, header};
  }
  void heard(int peer) { waiting_[static_cast<std::size_t>(peer)].first = false; }

 private:
  const communicator& comm_;
  std::vector<std::pair<bool, message_header>> waiting_;
  op_context ctx_;
};

}  // namespace troupe::collectives
