#pragma once
// The shared-memory transport for processes on one host, single-copy: post() writes only a
// descriptor (tag, address) into a ring in POSIX shared memory, and the receiver copies the
// payload straight out of the sender's buffer with process_vm_readv (Linux cross-memory attach,
// same user), either into its destination (allgather, broadcast) or through a cache-sized bounce
// buffer into the reduction. A post completes when the receiver has finished its descriptor.
// A payload of at most eager_bytes is instead copied into an eager buffer of the segment while
// one is free: that post is complete at once, and the receiver reads it without a system call,
// which is what small messages (latency) need.
// Waits sleep on futexes in short slices, so they notice aborts, deadlines, a closed ring and a
// dead peer process (kill(pid, 0), ESRCH from the copy).
//
// Posting does not wait unless `slots` descriptors are outstanding on one link; keep
// slots above the chunks of one segment (count / ranks / chunk elements).
#include <cstddef>
#include <string>
#include <vector>

#include "collectives/communicator.hpp"
#include "collectives/store.hpp"

namespace troupe::collectives {

struct shm_connect_options : rendezvous_options {
  shm_connect_options() { prefix = "shm"; }
  std::vector<int> peers;         // empty = default_peers
  std::size_t slots = 65536;      // descriptors per direction (64 bytes each)
  std::size_t mesh_slots = 1024;  // the same on links to ranks that are not ring neighbours,
                                  // which carry one or two messages per direct op
  std::size_t piece_bytes = std::size_t{256} << 10;  // bounce buffer of the reduction
  std::size_t eager_slots = 8;                       // eager buffers per direction (0: none)
  std::size_t eager_bytes = std::size_t{64} << 10;   // the size of each, a multiple of 64
};

communicator shm_connect(const shm_connect_options& options);

// Whether processes of this user may read each other's memory (process_vm_readv): false where
// Yama restricts it (kernel.yama.ptrace_scope above 0), which this transport cannot work under.
bool cross_memory_attach_allowed();

}  // namespace troupe::collectives
