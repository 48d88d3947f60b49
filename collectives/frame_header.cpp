#include "collectives/frame_header.hpp"

#include <msgpack.hpp>

#include <exception>

#include "collectives/bounded_unpack.hpp"

namespace troupe::collectives {
namespace {

constexpr std::size_t header_fields = 7;

}  // namespace

std::string pack_frame_header(const message_header& h) {
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> packer{buffer};
  packer.pack_array(header_fields);
  packer.pack(h.job);
  packer.pack(h.generation);
  packer.pack(h.op);
  packer.pack(h.phase);
  packer.pack(h.step);
  packer.pack(h.chunk);
  packer.pack(h.bytes);
  return std::string{buffer.data(), buffer.size()};
}

bool unpack_frame_header(const void* data, std::size_t size, message_header& h) {
  try {
    auto handle = bounded_unpack(data, size);
    const msgpack::object& o = handle.get();
    if (o.type != msgpack::type::ARRAY || o.via.array.size != header_fields) return false;
    const msgpack::object* f = o.via.array.ptr;
    h.job = f[0].as<std::uint64_t>();
    h.generation = f[1].as<std::uint64_t>();
    h.op = f[2].as<std::uint32_t>();
    h.phase = f[3].as<std::uint32_t>();
    h.step = f[4].as<std::uint32_t>();
    h.chunk = f[5].as<std::uint32_t>();
    h.bytes = f[6].as<std::uint64_t>();
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace troupe::collectives
