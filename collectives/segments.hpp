#pragma once
// Nomenclature shared by the ring algorithms (gloo style):
//   - the buffer of `count` elements is cut into `parts` *segments*; segment i covers
//     [offset(i), offset(i) + length(i)); lengths differ by at most one element, so any count
//     works (0, 1, primes, counts smaller than the number of ranks: some segments are empty);
//   - each segment travels as *chunks* of at most chunk_elems elements; chunk c of a segment
//     covers [c * chunk_elems, min(length, (c + 1) * chunk_elems)) of it.
#include <algorithm>
#include <cstddef>

namespace troupe::collectives {

struct segments {
  std::size_t count = 0;
  std::size_t parts = 1;

  std::size_t offset(std::size_t i) const {
    const std::size_t base = count / parts, extra = count % parts;
    return i * base + std::min(i, extra);
  }
  std::size_t length(std::size_t i) const { return count / parts + (i < count % parts ? 1 : 0); }
};

struct chunking {
  std::size_t chunk_elems = 1;

  std::size_t chunks_in(std::size_t length) const {
    return (length + chunk_elems - 1) / chunk_elems;
  }
  std::size_t offset(std::size_t c) const { return c * chunk_elems; }
  std::size_t length(std::size_t segment_length, std::size_t c) const {
    return std::min(chunk_elems, segment_length - c * chunk_elems);
  }
};

inline std::size_t mod(long long a, std::size_t n) {
  const long long m = static_cast<long long>(n);
  return static_cast<std::size_t>(((a % m) + m) % m);
}

}  // namespace troupe::collectives
