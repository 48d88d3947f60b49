#pragma once
// msgpack::unpack for bytes from another process. msgpack-c allocates a container's entries as
// soon as it reads the container's length, before it has seen them: a 5-byte array header that
// claims 2^32 - 1 entries makes it ask for 96 GiB (found by tests/fuzz/store_wire). Every entry
// takes at least one byte of the input, a map's pair two, so a length the input cannot hold is
// refused (msgpack::size_overflow, an unpack_error) before anything is allocated.
#include <msgpack.hpp>

#include <cstddef>

namespace troupe::collectives {

inline msgpack::object_handle bounded_unpack(const void* data, std::size_t size) {
  const msgpack::unpack_limit limit(size, size / 2, size, size, size, size);
  return msgpack::unpack(static_cast<const char*>(data), size, nullptr, nullptr, limit);
}

}  // namespace troupe::collectives
