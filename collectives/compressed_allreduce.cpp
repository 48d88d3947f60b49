#include "collectives/compressed_allreduce.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "collectives/segments.hpp"

namespace troupe::collectives {

// Ring allgather of variable-size blobs: at step s (0 .. n-2) rank r sends blob (r - s) to its
// right neighbour and receives blob (r - s - 1) from its left one; the blob received at step s
// is the one sent at step s + 1. Each blob is one message; its header carries its size.
void compressed_allreduce(const compressed_allreduce_options& options) {
  op_context ctx;
  const op_tag tag = begin_op(options, "compressed allreduce", ctx);
  if (!options.encoding || !options.state)
    throw input_error("compressed allreduce: options.encoding and options.state are required");
  communicator& comm = *options.comm;
  const std::size_t n = static_cast<std::size_t>(comm.size());
  const long long r = comm.rank();
  std::vector<std::vector<std::byte>> blob(n);
  const close_on_throw guard{comm};  // after the blobs: they are posted from
  blob[mod(r, n)] = options.encoding->encode(options.data, *options.state);
  if (n > 1) {
    peer_link& right = comm.link(right_of(comm.rank(), comm.size()));
    peer_link& left = comm.link(left_of(comm.rank(), comm.size()));
    for (std::size_t step = 0; step < n - 1; ++step) {
      const auto& send_blob = blob[mod(r - static_cast<long long>(step), n)];
      right.post(tag.header(0, static_cast<std::uint32_t>(step), 0, send_blob.size()),
                 send_blob.data(), ctx);
      auto& recv_blob = blob[mod(r - static_cast<long long>(step) - 1, n)];
      left.receive(
          tag.header(0, static_cast<std::uint32_t>(step), 0, 0),
          [&](const std::byte* piece, std::size_t bytes, std::size_t offset, std::size_t total) {
            recv_blob.resize(total);
            std::memcpy(recv_blob.data() + offset, piece, bytes);
          },
          ctx);
    }
    right.flush(ctx);
    if (options.sent_bytes) {
      std::size_t sent = 0;
      for (std::size_t step = 0; step < n - 1; ++step)
        sent += blob[mod(r - static_cast<long long>(step), n)].size();
      *options.sent_bytes = sent;
    }
  } else if (options.sent_bytes) {
    *options.sent_bytes = 0;
  }
  std::vector<float> decoded(options.data.size());
  std::fill(options.data.begin(), options.data.end(), 0.0f);
  for (std::size_t rank = 0; rank < n; ++rank) {
    options.encoding->decode(blob[rank], decoded);
    for (std::size_t i = 0; i < decoded.size(); ++i) options.data[i] += decoded[i];
  }
}

}  // namespace troupe::collectives
