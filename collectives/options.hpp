#pragma once
// What every collective call carries (STYLE habit 6: an options object plus a free function).
// A device_worker fills job, generation, deadline and its job's abort_signal; when the job bumps
// its generation it calls abort_signal::abort and the running op throws collective_error(aborted)
// within a couple of milliseconds.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "collectives/communicator.hpp"
#include "collectives/op_control.hpp"
#include "core/clock.hpp"

namespace troupe::collectives {

// How values of the ranks combine. max serves the distributed Max-AdaBelief form (the running max
// of the second moment); sum is everything else and the default, so existing callers are unchanged.
enum class reduce_op { sum, max };

struct op_options {
  communicator* comm = nullptr;
  std::uint64_t job = 0;
  std::uint64_t generation = 0;
  steady::time_point deadline = steady::time_point::max();
  std::shared_ptr<const abort_signal> abort;
  std::shared_ptr<const abort_signal> gone;  // op_context::gone
  // Payloads travel in chunks of at most this many bytes, so the receiver reduces one chunk
  // while the next is on the wire. A multiple of 64.
  std::size_t chunk_bytes = std::size_t{1} << 20;
};

// The tag shared by every message of one operation.
struct op_tag {
  std::uint64_t job = 0;
  std::uint64_t generation = 0;
  std::uint32_t op = 0;

  message_header header(std::uint32_t phase, std::uint32_t step, std::uint32_t chunk,
                        std::uint64_t bytes) const {
    return message_header{job, generation, op, phase, step, chunk, bytes};
  }
};

// Validates the options and draws the op id; throws input_error naming the bad field.
op_tag begin_op(const op_options& options, const char* op_name, op_context& ctx);

}  // namespace troupe::collectives
