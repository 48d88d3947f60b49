#include "collectives/allreduce.hpp"

#include "collectives/ring.hpp"

namespace troupe::collectives {

void allreduce(const allreduce_options& options) {
  op_context ctx;
  const op_tag tag = begin_op(options, "allreduce", ctx);
  ring_allreduce(*options.comm, options.data, tag, 0, ctx, options.chunk_bytes, options.op);
}

}  // namespace troupe::collectives
