#pragma once
// The header frame of a ZeroMQ data-plane message (collectives/zmq/zmq_link.cpp): the seven
// fields of message_header, in declaration order, as one msgpack array. The frame comes from
// another process, so unpacking refuses whatever is not exactly that. It lives apart from the
// link so that the fuzz target tests/fuzz/frame_header.cpp runs the very code the link runs.
#include <cstddef>
#include <string>

#include "collectives/peer_link.hpp"

namespace troupe::collectives {

std::string pack_frame_header(const message_header& h);

// True when `data` starts with a msgpack array of seven unsigned integers that fit their fields
// (bytes after the array are ignored); `h` then holds them. False for anything else, with `h`
// partly written.
bool unpack_frame_header(const void* data, std::size_t size, message_header& h);

}  // namespace troupe::collectives
