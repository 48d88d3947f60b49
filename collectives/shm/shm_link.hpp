#pragma once
// The shared-memory transport for processes on one host. Each direction of a link is a ring of
// `slots` fixed-size slots in a POSIX shared-memory segment: the sender copies a message into
// free slots (one copy), the receiver reduces or copies straight out of them, and both sides
// sleep on futexes with short timeouts when the ring is empty or full, so waits notice aborts,
// deadlines, a closed ring and a dead peer process (kill(pid, 0)).
//
// Posting never blocks: a sender thread per link drains the posted messages into the ring, so a
// ring algorithm can post to its right and receive from its left without deadlock.
#include <cstddef>
#include <string>
#include <vector>

#include "collectives/communicator.hpp"
#include "collectives/store.hpp"

namespace troupe::collectives {

struct shm_connect_options {
  store* rendezvous = nullptr;
  int rank = 0;
  int size = 1;
  std::string prefix = "shm";                               // store key namespace
  std::vector<int> peers;                                   // empty = the two ring neighbours
  steady::time_point deadline = steady::time_point::max();  // for the rendezvous
  std::size_t slots = 8;
  std::size_t slot_bytes = std::size_t{1} << 20;  // a multiple of 64
};

communicator shm_connect(const shm_connect_options& options);

}  // namespace troupe::collectives
