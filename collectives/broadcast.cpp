#include "collectives/broadcast.hpp"

#include <string>

#include "collectives/ring.hpp"

namespace troupe::collectives {

void broadcast(const broadcast_options& options) {
  op_context ctx;
  const op_tag tag = begin_op(options, "broadcast", ctx);
  if (options.root < 0 || options.root >= options.comm->size())
    throw input_error("broadcast: root " + std::to_string(options.root) + " outside a group of " +
                      std::to_string(options.comm->size()));
  chain_broadcast(*options.comm, options.data.data(), options.data.size(), options.root, tag, 0,
                  ctx, options.chunk_bytes);
}

}  // namespace troupe::collectives
