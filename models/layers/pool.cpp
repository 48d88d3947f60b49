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
        for (std::size_t ox = 0; ox < ow; ++ox) {
          std::size_t best = (ch * h + 2 * oy) * w + 2 * ox;
          const std::size_t cand[3] = {best + 1, best + w, best + w + 1};
          for (std::size_t j : cand)
            if (xi[j] > xi[best]) best = j;
          const std::size_t o = (ch * oh + oy) * ow + ox;
          yi[o] = xi[best];
          ai[o] = static_cast<std::int32_t>(best);
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
