#pragma once
// Ring allreduce (sum or max of float32) over any transport: reduce-scatter then allgather, chunked
// and pipelined (see ring.cpp for the algorithm). Every member calls it with the same count.
//
//   allreduce_options o;
//   o.comm = &comm; o.job = job; o.generation = generation; o.data = gradient;
//   o.deadline = deadline_in(5s); o.abort = job_abort;   // abort from another thread
//   allreduce(o);                                        // throws collective_error naming a peer
#include "collectives/options.hpp"
#include "core/span.hpp"

namespace troupe::collectives {

struct allreduce_options : op_options {
  span<float> data;  // in: this rank's values; out: the sum (or max) over all ranks
  reduce_op op = reduce_op::sum;
};

void allreduce(const allreduce_options& options);

}  // namespace troupe::collectives
