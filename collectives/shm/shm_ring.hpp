#pragma once
// One direction of a shared-memory link: a ring of message descriptors in a POSIX shared
// memory segment, plus the futex waits. A large payload never enters the segment: the receiver
// copies it straight out of the sender's buffer with process_vm_readv (one copy, as OpenMPI's
// vader does with CMA). A small one is copied into one of the segment's eager buffers, so that
// its post is complete at once and the receiver needs no system call (vader's fast boxes play
// the same part). Used by shm_link.cpp only.
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
  std::atomic<std::uint32_t> written_sleepers;  // receivers asleep on `written`
  alignas(64) std::atomic<std::uint32_t> consumed;
  std::atomic<std::uint32_t> consumed_sleepers;   // senders asleep on `consumed`
  alignas(64) std::atomic<std::uint32_t> closed;  // sender_closed | receiver_closed bits
  std::atomic<std::int32_t> sender_pid;
  std::atomic<std::int32_t> receiver_pid;
  std::uint32_t slots;
  std::uint32_t eager_slots;  // eager buffers; descriptor k may use buffer k % eager_slots
  std::uint32_t eager_bytes;  // the size of each (a multiple of 64)
};
constexpr std::uint32_t sender_closed = 1, receiver_closed = 2;
constexpr std::size_t control_bytes = 4096;

// Where a message's payload is: an address in the sender's process, or (eager != 0) the eager
// buffer of this descriptor's sequence number. A sender may use that buffer only while fewer
// than eager_slots descriptors are unfinished, so its previous user has been read.
struct descriptor {
  message_header header;
  std::uint64_t address;
  std::uint32_t eager;
};
static_assert(sizeof(descriptor) <= 64);

// A mapped segment. The receiver creates it (and names it), the sender opens it.
class segment {
 public:
  static segment create(const std::string& name, std::uint32_t slots, std::uint32_t eager_slots,
                        std::uint32_t eager_bytes);
  static segment open(const std::string& name);
  segment() = default;
  segment(segment&& o) noexcept;
  segment& operator=(segment&& o) noexcept;
  ~segment();

  ring_control& control() const { return *static_cast<ring_control*>(base_); }
  descriptor& slot(std::uint32_t sequence) const;  // the slot of descriptor number `sequence`
  std::byte* eager(std::uint32_t sequence) const;  // the eager buffer of that descriptor
  std::uint32_t slots() const { return slots_; }
  std::uint32_t eager_slots() const { return eager_slots_; }
  std::uint32_t eager_bytes() const { return eager_bytes_; }
  void unlink_name();  // the name is not needed once both sides have mapped it

 private:
  void* base_ = nullptr;
  std::size_t bytes_ = 0;
  std::string name_;
  // The geometry, kept here once checked: the copy in shared memory is the peer's to write.
  std::uint32_t slots_ = 0, eager_slots_ = 0, eager_bytes_ = 0;
};

// Sleeps while *word == seen, at most timeout_ns; returns on change, timeout or spurious
// wake-up alike (the caller re-checks). `sleepers` counts the threads asleep on the word, so that
// futex_wake makes no system call when nobody sleeps (the common case: waits poll first).
void futex_wait(std::atomic<std::uint32_t>& word, std::atomic<std::uint32_t>& sleepers,
                std::uint32_t seen, long timeout_ns);
// Wakes the sleepers of `word`, after the caller changed it.
void futex_wake(std::atomic<std::uint32_t>& word, const std::atomic<std::uint32_t>& sleepers);
// Wakes them whatever the count says (closing: the count is the peer's to write).
void futex_wake_all(std::atomic<std::uint32_t>& word);

// True when the process `pid` exists (0 = not attached yet: assumed alive).
bool process_alive(std::int32_t pid);

// Copies `bytes` at `remote` in process `pid` to `local`; returns 0 or the errno.
int read_remote(std::int32_t pid, void* local, std::uint64_t remote, std::size_t bytes);

// Unlinks this user's segments (/dev/shm/troupe-PID-...) whose creator PID is gone: a process
// killed before its peer mapped a segment leaves the name behind. Returns how many.
int remove_stale_segments(const std::string& dir = "/dev/shm");

}  // namespace troupe::collectives::shm
