#pragma once
// Allreduce through a codec: each rank encodes its values once (lossy codecs keep what they
// drop in the caller's codec_state), the encoded blobs go round the ring as an allgather, and
// every rank decodes all n blobs and sums them in rank order, so all ranks end with
// bit-identical sums. Traffic per rank is (n-1) x the encoded size.
#include "collectives/codecs/codec.hpp"
#include "collectives/options.hpp"
#include "core/span.hpp"

namespace troupe::collectives {

struct compressed_allreduce_options : op_options {
  span<float> data;
  const codec* encoding = nullptr;
  codec_state* state = nullptr;       // this rank's, kept across steps
  std::size_t* sent_bytes = nullptr;  // out, when set: the bytes this rank sent
};

void compressed_allreduce(const compressed_allreduce_options& options);

}  // namespace troupe::collectives
