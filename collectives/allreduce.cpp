#include "collectives/allreduce.hpp"

#include "collectives/direct.hpp"
#include "collectives/ring.hpp"

namespace troupe::collectives {

namespace {

enum class form { one_step, two_step, ring };

// The same choice on every member: the count is the same, and so is how they are connected.
form form_for(std::uint64_t bytes, bool linked_to_all, const allreduce_options& options) {
  if (linked_to_all && bytes <= options.one_step_bytes) return form::one_step;
  if (linked_to_all && bytes <= options.two_step_bytes) return form::two_step;
  return form::ring;
}

}  // namespace

void allreduce(const allreduce_options& options) {
  op_context ctx;
  const op_tag tag = begin_op(options, "allreduce", ctx);
  communicator& comm = *options.comm;
  switch (form_for(options.data.size() * sizeof(float), fully_connected(comm), options)) {
    case form::one_step:
      return one_step_allreduce(comm, options.data, tag, 0, ctx, options.op);
    case form::two_step:
      return two_step_allreduce(comm, options.data, tag, 0, ctx, options.op);
    case form::ring:
      return ring_allreduce(comm, options.data, tag, 0, ctx, options.chunk_bytes, options.op);
  }
}

std::uint64_t allreduce_wire_bytes(std::uint64_t bytes, int ranks,
                                   const allreduce_options& options) {
  const auto n = static_cast<std::uint64_t>(ranks < 1 ? 1 : ranks);
  // default_peers links every pair up to full_mesh_ranks.
  if (form_for(bytes, ranks <= full_mesh_ranks, options) == form::one_step)
    return n * (n - 1) * bytes;
  return 2 * (n - 1) * bytes;  // two steps and the ring alike
}

}  // namespace troupe::collectives
