#include "collectives/allreduce.hpp"

#include "collectives/direct.hpp"
#include "collectives/ring.hpp"

namespace troupe::collectives {

void allreduce(const allreduce_options& options) {
  op_context ctx;
  const op_tag tag = begin_op(options, "allreduce", ctx);
  // The same choice on every member: the count is the same, and so is how they are connected.
  const std::size_t bytes = options.data.size() * sizeof(float);
  communicator& comm = *options.comm;
  const bool direct = fully_connected(comm);
  if (direct && bytes <= options.one_step_bytes)
    one_step_allreduce(comm, options.data, tag, 0, ctx, options.op);
  else if (direct && bytes <= options.two_step_bytes)
    two_step_allreduce(comm, options.data, tag, 0, ctx, options.op);
  else
    ring_allreduce(comm, options.data, tag, 0, ctx, options.chunk_bytes, options.op);
}

std::uint64_t allreduce_wire_bytes(std::uint64_t bytes, int ranks,
                                   const allreduce_options& options) {
  const auto n = static_cast<std::uint64_t>(ranks < 1 ? 1 : ranks);
  if (ranks <= full_mesh_ranks && bytes <= options.one_step_bytes) return n * (n - 1) * bytes;
  return 2 * (n - 1) * bytes;
}

}  // namespace troupe::collectives
