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

}  // namespace troupe::collectives
