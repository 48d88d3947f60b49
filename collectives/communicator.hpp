#pragma once
// A communicator is this rank's view of a group: its rank, the group size and one peer_link per
// connected peer. Operations take their op id from it in call order, so every member must call
// the same collectives in the same order (as with MPI and gloo). A sub-communicator (a level of
// the hierarchy) shares the parent's links but numbers ranks inside the subset.
#include <cstdint>
#include <exception>
#include <memory>
#include <vector>

#include "collectives/peer_link.hpp"

namespace troupe::collectives {

class communicator {
 public:
  communicator() = default;
  communicator(int rank, int size, std::vector<std::shared_ptr<peer_link>> links);

  int rank() const { return rank_; }
  int size() const { return size_; }

  // The link to `peer` (a rank of this communicator); throws input_error when not connected.
  peer_link& link(int peer) const;
  bool connected(int peer) const;

  // The id of the next operation; advanced by every collective whether it succeeds or not, so
  // members stay in step after an abort.
  std::uint32_t next_op() { return next_op_++; }

  // The members `ranks` (ranks of this communicator, this rank among them) as a communicator of
  // their own, sharing this communicator's links.
  communicator subset(const std::vector<int>& ranks) const;

  // Closes every link, so that peers still waiting on us fail at once. After an operation threw,
  // transports may still be reading the caller's buffer (a chunk on the wire); once close()
  // returns they no longer do, so a device_worker closes the communicator of the old generation
  // before it reuses or frees its gradient buffer.
  void close();

 private:
  int rank_ = 0;
  int size_ = 1;
  std::vector<std::shared_ptr<peer_link>> links_;  // by rank; null for self and unconnected
  std::uint32_t next_op_ = 0;
};

// Ring neighbours, used by every ring algorithm.
inline int right_of(int rank, int size) {
  return (rank + 1) % size;
}
inline int left_of(int rank, int size) {
  return (rank + size - 1) % size;
}

// The ring neighbours of `rank` (one entry when size == 2, none when size == 1), ascending.
std::vector<int> ring_peers(int rank, int size);

// Up to this many ranks the transports link every pair by default, so that small messages take
// the one-step direct allreduce (direct.hpp); above it each rank links its ring neighbours only.
constexpr int full_mesh_ranks = 8;

// Whom `rank` links with when the caller names no peers: every other rank up to
// full_mesh_ranks, the ring neighbours above.
std::vector<int> default_peers(int rank, int size);

// True when this rank has a link to every other member.
bool fully_connected(const communicator& comm);

// Closes `comm` when its scope is left by an exception. An operation that throws (a peer gone, a
// deadline, an abort) may still have chunks of the caller's buffer on the wire to other peers;
// closing waits until no transport reads them, so the caller may free or reuse the buffer as
// soon as the exception reaches it. A communicator that failed is not used again: the job builds
// one for its next generation. Declare it after any local buffer the operation posts from.
class close_on_throw {
 public:
  explicit close_on_throw(communicator& comm) : comm_(comm) {}
  ~close_on_throw() {
    if (std::uncaught_exceptions() > exceptions_) comm_.close();
  }
  close_on_throw(const close_on_throw&) = delete;
  close_on_throw& operator=(const close_on_throw&) = delete;

 private:
  communicator& comm_;
  int exceptions_ = std::uncaught_exceptions();
};

}  // namespace troupe::collectives
