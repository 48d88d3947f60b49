#pragma once
// One direction of a shared-memory link: a ring of message descriptors in a POSIX shared
// memory segment, plus the futex waits. The payload itself never enters the segment: the
// receiver copies it straight out of the sender's buffer with process_vm_readv (one copy, as
// OpenMPI's vader does with CMA). Used by shm_link.cpp only.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "collectives/peer_link.hpp"

namespace troupe::collectives::shm {

// The first cache lines of a segment. Counters run modulo 2^32: written - consumed is the
// number of descriptors the receiver has not finished with; `consumed` doubles as the sender's
// completion count (descriptor k is done once consumed - k >= 0).
struct ring_control {
  alignas(64) std::atomic<std::uint32_t> written;
  alignas(64) std::atomic<std::uint32_t> consumed;
  alignas(64) std::atomic<std::uint32_t> closed;  // sender_closed | receiver_closed bits
  std::atomic<std::int32_t> sender_pid;
  std::atomic<std::int32_t> receiver_pid;
  std::uint32_t slots;
};
constexpr std::uint32_t sender_closed = 1, receiver_closed = 2;
constexpr std::size_t control_bytes = 4096;

// Where a message's payload is: an address in the sender's process.
struct descriptor {
  message_header header;
  std::uint64_t address;
};
static_assert(sizeof(descriptor) <= 64);

// A mapped segment. The receiver creates it (and names it), the sender opens it.
class segment {
 public:
  static segment create(const std::string& name, std::uint32_t slots);
  static segment open(const std::string& name);
  segment() = default;
  segment(segment&& o) noexcept;
  segment& operator=(segment&& o) noexcept;
  ~segment();

  ring_control& control() const { return *static_cast<ring_control*>(base_); }
  descriptor& slot(std::uint32_t sequence) const;  // the slot of descriptor number `sequence`
  void unlink_name();  // the name is not needed once both sides have mapped it

 private:
  void* base_ = nullptr;
  std::size_t bytes_ = 0;
  std::string name_;
};

// Sleeps while *word == seen, at most timeout_ns; returns on change, timeout or spurious
// wake-up alike (the caller re-checks).
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t seen, long timeout_ns);
void futex_wake(std::atomic<std::uint32_t>& word);

// True when the process `pid` exists (0 = not attached yet: assumed alive).
bool process_alive(std::int32_t pid);

// Copies `bytes` at `remote` in process `pid` to `local`; returns 0 or the errno.
int read_remote(std::int32_t pid, void* local, std::uint64_t remote, std::size_t bytes);

// Unlinks this user's segments (/dev/shm/troupe-PID-...) whose creator PID is gone: a process
// killed before its peer mapped a segment leaves the name behind. Returns how many.
int remove_stale_segments(const std::string& dir = "/dev/shm");

}  // namespace troupe::collectives::shm
