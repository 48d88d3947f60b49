#include "models/layers/pool.hpp"

#include <cstring>

namespace troupe::models::layers {

void maxpool2_forward(const float* x, float* y, std::int32_t* arg, std::size_t n, std::size_t c,
                      std::size_t h, std::size_t w) {
  const std::size_t oh = h / 2, ow = w / 2, in_size = c * h * w, out_size = c * oh * ow;
  for (std::size_t i = 0; i < n; ++i) {
    const float* xi = x + i * in_size;
    float* yi = y + i * out_size;
    std::int32_t* ai = arg + i * out_size;
    for (std::size_t ch = 0; ch < c; ++ch) {
      for (std::size_t oy = 0; oy < oh; ++oy) {
        const std::size_t top = (ch * h + 2 * oy) * w;
        const float* r0 = xi + top;
        const float* r1 = r0 + w;
        float* yo = yi + (ch * oh + oy) * ow;
        std::int32_t* ao = ai + (ch * oh + oy) * ow;
        // Selects, not branches: which input wins is data-dependent and mispredicted half the
        // time, which made this loop cost more than the convolution after it. The index select
        // is written as masks so that no compiler turns it back into a branch; the order and the
        // strict > keep the first of equal maxima, as before.
        for (std::size_t ox = 0; ox < ow; ++ox) {
          const auto at = static_cast<std::int32_t>(top + 2 * ox);
          const float cand[3] = {r0[2 * ox + 1], r1[2 * ox], r1[2 * ox + 1]};
          const std::int32_t cand_at[3] = {at + 1, at + static_cast<std::int32_t>(w),
                                           at + static_cast<std::int32_t>(w) + 1};
          float best = r0[2 * ox];
          std::int32_t where = at;
          for (int j = 0; j < 3; ++j) {
            const std::int32_t take = -static_cast<std::int32_t>(cand[j] > best);
            where = (where & ~take) | (cand_at[j] & take);
            best = cand[j] > best ? cand[j] : best;
          }
          yo[ox] = best;
          ao[ox] = where;
        }
      }
    }
  }
}

void maxpool2_backward(const float* dy, const std::int32_t* arg, float* dx, std::size_t n,
                       std::size_t c, std::size_t h, std::size_t w) {
  const std::size_t in_size = c * h * w, out_size = c * (h / 2) * (w / 2);
  std::memset(dx, 0, n * in_size * sizeof(float));
  for (std::size_t i = 0; i < n; ++i) {
    const float* gi = dy + i * out_size;
    const std::int32_t* ai = arg + i * out_size;
    float* di = dx + i * in_size;
    for (std::size_t o = 0; o < out_size; ++o) di[ai[o]] += gi[o];
  }
}

}  // namespace troupe::models::layers
