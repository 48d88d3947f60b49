#pragma once
// Split plans: how a global batch of B samples is cut into per-worker slices. Every plan sums to
// exactly B, so the step's gradient (a sample-weighted sum) is the same whatever the split.
#include <cstdint>
#include <vector>

namespace troupe::data {

// B into `workers` near-equal slices; the first B % workers slices get one extra sample.
std::vector<std::int64_t> split_even(std::int64_t batch, std::int64_t workers);

// B in proportion to `weights` by largest-remainder rounding: each slice is floor(B w_i / sum w)
// or one more, the extra samples going to the largest fractional parts, ties to the lower index.
// A zero weight gets 0. With `min_one` and B >= the number of positive weights, every
// positive-weight worker gets at least 1 (taken from the slices furthest above their quota).
// Throws troupe::input_error on B < 0, no weights, a negative or non-finite weight, or all zero.
std::vector<std::int64_t> split_weighted(std::int64_t batch, const std::vector<double>& weights,
                                         bool min_one = false);

// split_weighted in whole blocks of `block` samples: the batch is cut into ceil(B / block) blocks
// (the last one short when block does not divide B), the blocks are apportioned by weight as
// above, and each slice is the samples of its blocks. Every slice but the one holding the last
// block is a multiple of `block`, so slices that start at a block boundary keep every later
// boundary where it was: the canonical reduction's blocks (actors/sync/parameter_server.hpp) are
// the same samples however the batch is split. block <= 0 is split_weighted.
std::vector<std::int64_t> split_blocks(std::int64_t batch, std::int64_t block,
                                       const std::vector<double>& weights, bool min_one = false);

}  // namespace troupe::data
