#pragma once
// Communication codecs: encode a float32 payload to bytes and back, with a stated error bound.
// Lossy codecs that drop information (top-k, PowerSGD) use error feedback: what was not sent
// this time is kept in the caller-owned codec_state and added to the next payload, so nothing
// is lost over steps, only delayed.
//
//   spec        bytes (n values)         bound (per call, x = values + residual)
//   fp16        2n + 16                  |x - y| <= 2^-11 |x| + 2^-25 for |x| < 65520
//   bf16        2n + 16                  |x - y| <= 2^-8 |x|  (normal floats)
//   topk:R      8k + 24, k = ceil(R n)   y + residual' == x exactly (error feedback)
//   powersgd:r  4r(rows+cols) + 20       ||x - y||_F <= ||x||_F; y + residual' == x (1e-6 rel);
//                                        exact when x as a rows x cols matrix has rank <= r
//   spd-tri     2n(n+1) + 24 (n x n)     exact; refuses a matrix that is not SPD
//   spd-chol    2n(n+1) + 24 (n x n)     ||A - LL^T||_F <= 2^-22 (trace A + ||A||_F); refuses
//   non-SPD
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/span.hpp"

namespace troupe::collectives {

// Owned by the caller (one per tensor per rank) and carried across steps.
struct codec_state {
  std::vector<float> residual;  // error feedback: what earlier encodes did not send
  std::vector<float> q;         // PowerSGD: the right factor, warm-started across steps

  // Error feedback: adds `values` into the residual (zeros on first use or a new size) and
  // returns it, the sum this encode compresses; the encoder leaves in it what it did not send.
  std::vector<float>& accumulate(span<const float> values) {
    if (residual.size() != values.size()) residual.assign(values.size(), 0.0f);
    for (std::size_t i = 0; i < values.size(); ++i) residual[i] += values[i];
    return residual;
  }
};

class codec {
 public:
  virtual ~codec() = default;
  virtual std::string name() const = 0;
  // Throws input_error when the payload is not acceptable (spd-*: not square, not SPD).
  virtual std::vector<std::byte> encode(span<const float> values, codec_state& state) const = 0;
  // `out` has the encoded count of values; throws input_error on malformed bytes.
  virtual void decode(span<const std::byte> bytes, span<float> out) const = 0;
};

// fp16, bf16, topk[:ratio] (default 0.01), powersgd[:rank] (default 4), spd-tri, spd-chol.
// Throws input_error naming the spec when unknown.
std::unique_ptr<codec> make_codec(const std::string& spec);

std::unique_ptr<codec> make_fp16_codec();
std::unique_ptr<codec> make_bf16_codec();
std::unique_ptr<codec> make_topk_codec(double ratio);
std::unique_ptr<codec> make_powersgd_codec(int rank);
std::unique_ptr<codec> make_spd_codec(bool cholesky);

}  // namespace troupe::collectives
