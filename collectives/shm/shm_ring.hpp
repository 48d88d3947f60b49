#pragma once
// One direction of a shared-memory link: the segment layout and the futex waits. Used by
// shm_link.cpp only.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "collectives/peer_link.hpp"

namespace troupe::collectives::shm {

// The first page of a segment. Counters run modulo 2^32; written - consumed is the number of
// full slots.
struct ring_control {
  alignas(64) std::atomic<std::uint32_t> written;
  alignas(64) std::atomic<std::uint32_t> consumed;
  alignas(64) std::atomic<std::uint32_t> closed;  // sender_closed | receiver_closed bits
  std::atomic<std::int32_t> sender_pid;
  std::atomic<std::int32_t> receiver_pid;
  std::uint32_t slots;
  std::uint32_t slot_bytes;
};
constexpr std::uint32_t sender_closed = 1, receiver_closed = 2;

// Each slot starts with this header, padded to 64 bytes so that payload pieces stay aligned.
struct slot_header {
  message_header header;
  std::uint64_t piece_offset;
  std::uint64_t piece_bytes;
};
constexpr std::size_t slot_header_bytes = 64;
static_assert(sizeof(slot_header) <= slot_header_bytes);
constexpr std::size_t control_bytes = 4096;

// A mapped segment. The receiver creates it (and names it), the sender opens it.
class segment {
 public:
  static segment create(const std::string& name, std::uint32_t slots, std::uint32_t slot_bytes);
  static segment open(const std::string& name);
  segment() = default;
  segment(segment&& o) noexcept;
  segment& operator=(segment&& o) noexcept;
  ~segment();

  ring_control& control() const { return *static_cast<ring_control*>(base_); }
  slot_header& header_of(std::uint32_t slot) const;
  std::byte* payload_of(std::uint32_t slot) const;
  const std::string& name() const { return name_; }
  void unlink_name();  // the name is not needed once both sides have mapped it

 private:
  void* base_ = nullptr;
  std::size_t bytes_ = 0;
  std::string name_;
};

// Sleeps while *word == seen, at most until `until_ns` from now; returns on change, timeout or
// spurious wake-up alike (the caller re-checks).
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t seen, long timeout_ns);
void futex_wake(std::atomic<std::uint32_t>& word);

// True when the process `pid` exists (0 = unknown yet: assumed alive).
bool process_alive(std::int32_t pid);

}  // namespace troupe::collectives::shm
