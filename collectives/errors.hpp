#pragma once
// Why a collective stopped early. Every failure names the peer it was waiting on (rank and
// address), because the caller's next move (drop the member, bump the generation) depends on who it
// was.
#include <string>

#include "core/error.hpp"

namespace troupe::collectives {

// Who is at the other end of a link: the rank inside the communicator and a printable address
// ("inproc:3", "tcp://127.0.0.1:40123", "shm:/troupe-...").
struct peer_info {
  int rank = -1;
  std::string address;

  std::string describe() const { return "rank " + std::to_string(rank) + " (" + address + ")"; }
};

enum class failure_kind {
  timeout,      // the deadline passed while waiting on the peer
  aborted,      // another thread called abort_signal::abort
  peer_closed,  // the peer closed its end or its process is gone
  protocol,     // the peer sent something that cannot belong to this operation
};

const char* to_string(failure_kind kind);

// Thrown by every collective and transport; what() reads like
// "allreduce: timed out waiting for data from rank 2 (tcp://127.0.0.1:40123)".
class collective_error : public runtime_failure {
 public:
  collective_error(failure_kind kind, peer_info peer, const std::string& what)
      : runtime_failure(what), kind_(kind), peer_(std::move(peer)) {}

  failure_kind kind() const { return kind_; }
  const peer_info& peer() const { return peer_; }

 private:
  failure_kind kind_;
  peer_info peer_;
};

}  // namespace troupe::collectives
