#include "collectives/peer_link.hpp"

#include <cstring>
#include <string>

namespace troupe::collectives {

void expect_payload_size(std::size_t total, std::size_t expected, const peer_info& from,
                         const op_context& ctx) {
  if (total != expected)
    throw collective_error(failure_kind::protocol, from,
                           ctx.op_name + ": " + from.describe() + " sent " + std::to_string(total) +
                               " bytes where " + std::to_string(expected) +
                               " were expected (mismatched count?)");
}

message_header peer_link::receive_into(const message_header& expect, std::byte* into,
                                       std::size_t bytes, const op_context& ctx) {
  const auto got = receive(
      expect,
      [&](const std::byte* piece, std::size_t piece_bytes, std::size_t offset, std::size_t total) {
        expect_payload_size(total, bytes, peer(), ctx);
        std::memcpy(into + offset, piece, piece_bytes);
      },
      ctx);
  // An empty payload passes no piece to the callback: check its size here too.
  expect_payload_size(static_cast<std::size_t>(got.bytes), bytes, peer(), ctx);
  return got;
}

}  // namespace troupe::collectives
