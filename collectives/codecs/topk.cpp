// Top-k with error feedback: send the k entries of largest magnitude of (values + residual) as
// (index, value) pairs; everything else stays in the residual for the next step.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "collectives/codecs/codec.hpp"
#include "collectives/codecs/wire_format.hpp"

namespace troupe::collectives {
namespace {

class topk_codec final : public codec {
 public:
  explicit topk_codec(double ratio) : ratio_(ratio) {}
  std::string name() const override { return "topk:" + std::to_string(ratio_); }

  std::vector<std::byte> encode(span<const float> values, codec_state& state) const override {
    const std::size_t n = values.size();
    std::vector<float>& accumulated = state.accumulate(values);
    const std::size_t k =
        n == 0 ? 0
               : std::min(n, static_cast<std::size_t>(std::ceil(ratio_ * static_cast<double>(n))));
    std::vector<std::uint32_t> index(n);
    std::iota(index.begin(), index.end(), 0u);
    std::nth_element(index.begin(), index.begin() + static_cast<std::ptrdiff_t>(k), index.end(),
                     [&](std::uint32_t a, std::uint32_t b) {
                       return std::fabs(accumulated[a]) > std::fabs(accumulated[b]);
                     });
    index.resize(k);
    std::sort(index.begin(), index.end());  // sequential access when decoding
    codec_wire::writer w;
    w.put<std::uint64_t>(n);
    w.put<std::uint64_t>(k);
    w.put<std::uint64_t>(0);  // reserved
    for (std::uint32_t i : index) {
      w.put(i);
      w.put(accumulated[i]);
      accumulated[i] = 0.0f;  // sent: nothing of it remains
    }
    return std::move(w.bytes);
  }

  void decode(span<const std::byte> bytes, span<float> out) const override {
    codec_wire::reader r{bytes, "topk"};
    codec_wire::expect_count(r.get<std::uint64_t>(), out.size(), "topk");
    const auto k = r.get<std::uint64_t>();
    (void)r.get<std::uint64_t>();
    std::fill(out.begin(), out.end(), 0.0f);
    for (std::uint64_t j = 0; j < k; ++j) {
      const auto i = r.get<std::uint32_t>();
      const auto v = r.get<float>();
      if (i >= out.size())
        throw input_error("topk codec: index " + std::to_string(i) + " out of range");
      out[i] = v;
    }
    r.expect_end();
  }

 private:
  double ratio_;
};

}  // namespace

std::unique_ptr<codec> make_topk_codec(double ratio) {
  if (!(ratio > 0.0 && ratio <= 1.0))
    throw input_error("topk codec: ratio must be in (0, 1], got " + std::to_string(ratio));
  return std::make_unique<topk_codec>(ratio);
}

}  // namespace troupe::collectives
