#include "collectives/options.hpp"

#include <string>

namespace troupe::collectives {

op_tag begin_op(const op_options& options, const char* op_name, op_context& ctx) {
  if (options.comm == nullptr) throw input_error(std::string{op_name} + ": options.comm is null");
  if (options.chunk_bytes < 64 || options.chunk_bytes % 64 != 0)
    throw input_error(std::string{op_name} +
                      ": chunk_bytes must be a positive multiple of 64, got " +
                      std::to_string(options.chunk_bytes));
  ctx.op_name = op_name;
  ctx.deadline = options.deadline;
  ctx.abort = options.abort;
  ctx.gone = options.gone;
  return op_tag{options.job, options.generation, options.comm->next_op()};
}

}  // namespace troupe::collectives
