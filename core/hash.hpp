#pragma once
// FNV-1a 64: the fingerprint of parameter bytes in reports and checkpoints.
#include <cstddef>
#include <cstdint>

namespace troupe {

constexpr std::uint64_t fnv1a64_init = 0xcbf29ce484222325ULL;

inline std::uint64_t fnv1a64(const void* data, std::size_t bytes, std::uint64_t h = fnv1a64_init) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace troupe
