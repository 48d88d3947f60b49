#pragma once
// The reduction at the heart of the in-process shared allreduce: out = the reduction of m input
// arrays, in input order, read in ONE pass. Each output element is reduced in a register from
// all inputs and written once, so per byte of result the memory traffic is m reads and one
// write, the minimum. (Reducing input by input through a buffer, as the first version did, is
// as many passes as inputs: at 4 ranks it ran at 0.7x the one-pass speed.)
//
// Bits: element i is ((in0[i] + in1[i]) + in2[i]) ... with the division by `divisor` applied
// to the last sum, exactly the float operations of the scalar "out = in0; out += in_k;
// out /= divisor" loop of the parameter-server shard. max keeps "b > acc ? b : acc".
#include <cstddef>

#include "collectives/options.hpp"

namespace troupe::collectives {

struct reduce_spec {
  reduce_op op = reduce_op::sum;
  bool divide = false;  // sum only: divide the result by divisor
  float divisor = 1.0f;
  // Non-temporal stores for the result: for results far larger than the cache, where a normal
  // store would first read the line it overwrites.
  bool stream = false;
  // The baseline SSE2 code even where the CPU has AVX2 (tests check both give the same bits).
  bool portable = false;
};

// out[0, n) = reduction of ins[k][lo, lo + n) for k in [0, m); m == 0 writes zeros. `out` is
// the result at offset lo already (out[0] pairs with ins[k][lo]).
void reduce_into(float* out, const float* const* ins, std::size_t m, std::size_t lo, std::size_t n,
                 const reduce_spec& spec);

// |v|^2: eight float partials (pipelined, vectorised), moved into a double every 512 elements
// so that a long array does not lose digits to float rounding. The noise scale's |G_B|^2 in
// workers, PS shards, agents and the shared allreduce's pieces.
double sq_norm(const float* v, std::size_t n);

// Makes streamed stores visible to other threads (a store fence); call before publishing.
void reduce_publish();

}  // namespace troupe::collectives
