#include "models/layers/pool.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/cpu_features.hpp"

namespace troupe::models::layers {

// Both passes go a row pair at a time over planes of n*c, with selects rather than branches:
// which input wins is data-dependent and mispredicted half the time.

namespace {

// Each pass is compiled twice, for the baseline ISA and for AVX2 (twice the lanes for the
// deinterleaving compares), and picked at run time. Compares and selects round nothing, so both
// copies give the same bits.
__attribute__((always_inline)) inline void forward_body(const float* __restrict x,
                                                        float* __restrict y,
                                                        std::int32_t* __restrict win, std::size_t n,
                                                        std::size_t c, std::size_t h,
                                                        std::size_t w) {
  const std::size_t oh = h / 2, ow = w / 2, planes = n * c;
  for (std::size_t p = 0; p < planes; ++p) {
    for (std::size_t oy = 0; oy < oh; ++oy) {
      const float* r0 = x + (p * h + 2 * oy) * w;
      const float* r1 = r0 + w;
      const std::size_t o = (p * oh + oy) * ow;
      for (std::size_t ox = 0; ox < ow; ++ox) {
        const float cand[4] = {r0[2 * ox], r0[2 * ox + 1], r1[2 * ox], r1[2 * ox + 1]};
        float best = cand[0];
        std::uint32_t at = 0;
        for (std::uint32_t j = 1; j < 4; ++j) {
          // A mask, not ?: on the index, which kept the compiler from vectorizing this loop.
          const std::uint32_t take = 0u - static_cast<std::uint32_t>(cand[j] > best);
          at = (at & ~take) | (j & take);
          best = cand[j] > best ? cand[j] : best;
        }
        y[o + ox] = best;
        win[o + ox] = static_cast<std::int32_t>(at);
      }
    }
  }
}

// v where mask is all ones, +0 where it is zero.
__attribute__((always_inline)) inline float keep(float v, std::uint32_t mask) {
  std::uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  bits &= mask;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

__attribute__((always_inline)) inline void backward_body(const std::int32_t* __restrict win,
                                                         const float* __restrict dy,
                                                         float* __restrict dx, std::size_t n,
                                                         std::size_t c, std::size_t h,
                                                         std::size_t w) {
  const std::size_t oh = h / 2, ow = w / 2, planes = n * c;
  for (std::size_t p = 0; p < planes; ++p) {
    for (std::size_t oy = 0; oy < oh; ++oy) {
      float* d0 = dx + (p * h + 2 * oy) * w;
      float* d1 = d0 + w;
      const std::size_t o = (p * oh + oy) * ow;
      for (std::size_t ox = 0; ox < ow; ++ox) {
        // Masks on the gradient's bits, not ?: on floats, which the compiler did not vectorize.
        const auto at = static_cast<std::uint32_t>(win[o + ox]);
        const float g = dy[o + ox];
        d0[2 * ox] = keep(g, 0u - (at == 0));
        d0[2 * ox + 1] = keep(g, 0u - (at == 1));
        d1[2 * ox] = keep(g, 0u - (at == 2));
        d1[2 * ox + 1] = keep(g, 0u - (at == 3));
      }
      // An odd width's last column takes part in no window.
      if (w % 2 != 0) d0[w - 1] = d1[w - 1] = 0.0f;
    }
    // Likewise an odd height's last row.
    if (h % 2 != 0) std::fill_n(dx + (p * h + h - 1) * w, w, 0.0f);
  }
}

void forward_baseline(const float* x, float* y, std::int32_t* win, std::size_t n, std::size_t c,
                      std::size_t h, std::size_t w) {
  forward_body(x, y, win, n, c, h, w);
}
void backward_baseline(const std::int32_t* win, const float* dy, float* dx, std::size_t n,
                       std::size_t c, std::size_t h, std::size_t w) {
  backward_body(win, dy, dx, n, c, h, w);
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) void forward_avx2(const float* x, float* y, std::int32_t* win,
                                                  std::size_t n, std::size_t c, std::size_t h,
                                                  std::size_t w) {
  forward_body(x, y, win, n, c, h, w);
}
__attribute__((target("avx2"))) void backward_avx2(const std::int32_t* win, const float* dy,
                                                   float* dx, std::size_t n, std::size_t c,
                                                   std::size_t h, std::size_t w) {
  backward_body(win, dy, dx, n, c, h, w);
}
#endif

}  // namespace

void maxpool2_forward(const float* x, float* y, std::int32_t* win, std::size_t n, std::size_t c,
                      std::size_t h, std::size_t w) {
#if defined(__x86_64__)
  if (cpu_has_avx2()) return forward_avx2(x, y, win, n, c, h, w);
#endif
  forward_baseline(x, y, win, n, c, h, w);
}

void maxpool2_backward(const std::int32_t* win, const float* dy, float* dx, std::size_t n,
                       std::size_t c, std::size_t h, std::size_t w) {
#if defined(__x86_64__)
  if (cpu_has_avx2()) return backward_avx2(win, dy, dx, n, c, h, w);
#endif
  backward_baseline(win, dy, dx, n, c, h, w);
}

}  // namespace troupe::models::layers
