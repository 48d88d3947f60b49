#include "models/layers/conv.hpp"

#include <cblas.h>

#include <algorithm>
#include <cstring>

namespace troupe::models::layers {

namespace {

// The output columns ox whose input column ox + dx lies inside [0, w).
struct valid_range {
  std::size_t lo, hi;
};
valid_range columns(std::size_t w, long dx) {
  const long lo = std::max(0L, -dx);
  const long hi = std::min(static_cast<long>(w), static_cast<long>(w) - dx);
  return {static_cast<std::size_t>(lo), static_cast<std::size_t>(std::max(lo, hi))};
}

}  // namespace

void im2col(const conv_shape& s, const float* x, float* col) {
  const long p = static_cast<long>(s.k / 2);
  const std::size_t hw = s.h * s.w;
  for (std::size_t ci = 0; ci < s.c; ++ci) {
    const float* plane = x + ci * hw;
    for (std::size_t ki = 0; ki < s.k; ++ki) {
      for (std::size_t kj = 0; kj < s.k; ++kj) {
        float* row = col + ((ci * s.k + ki) * s.k + kj) * hw;
        const long dy = static_cast<long>(ki) - p, dx = static_cast<long>(kj) - p;
        const valid_range r = columns(s.w, dx);
        for (std::size_t oy = 0; oy < s.h; ++oy) {
          float* out = row + oy * s.w;
          const long iy = static_cast<long>(oy) + dy;
          if (iy < 0 || iy >= static_cast<long>(s.h)) {
            std::memset(out, 0, s.w * sizeof(float));
            continue;
          }
          const float* in = plane + static_cast<std::size_t>(iy) * s.w;
          std::fill(out, out + r.lo, 0.0f);
          std::memcpy(out + r.lo, in + (static_cast<long>(r.lo) + dx),
                      (r.hi - r.lo) * sizeof(float));
          std::fill(out + r.hi, out + s.w, 0.0f);
        }
      }
    }
  }
}

void col2im(const conv_shape& s, const float* dcol, float* dx_out) {
  const long p = static_cast<long>(s.k / 2);
  const std::size_t hw = s.h * s.w;
  for (std::size_t ci = 0; ci < s.c; ++ci) {
    float* plane = dx_out + ci * hw;
    for (std::size_t ki = 0; ki < s.k; ++ki) {
      for (std::size_t kj = 0; kj < s.k; ++kj) {
        const float* row = dcol + ((ci * s.k + ki) * s.k + kj) * hw;
        const long dy = static_cast<long>(ki) - p, dx = static_cast<long>(kj) - p;
        const valid_range r = columns(s.w, dx);
        for (std::size_t oy = 0; oy < s.h; ++oy) {
          const long iy = static_cast<long>(oy) + dy;
          if (iy < 0 || iy >= static_cast<long>(s.h)) continue;
          const float* g = row + oy * s.w;
          float* in = plane + static_cast<std::size_t>(iy) * s.w;
          for (std::size_t ox = r.lo; ox < r.hi; ++ox) in[static_cast<long>(ox) + dx] += g[ox];
        }
      }
    }
  }
}

void conv2d_forward(const conv_shape& s, const float* x, const float* wt, const float* b, float* y,
                    std::size_t n, float* col, bool relu) {
  const std::size_t hw = s.h * s.w;
  const int M = static_cast<int>(s.cout), N = static_cast<int>(hw),
            K = static_cast<int>(s.col_rows());
  for (std::size_t i = 0; i < n; ++i) {
    const float* xi = x + i * s.in_size();
    float* yi = y + i * s.out_size();
    // A 1x1 kernel's column matrix is the input itself.
    const float* ci = xi;
    if (s.k != 1) {
      im2col(s, xi, col);
      ci = col;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, wt, K, ci, N, 0.0f, yi,
                N);
    for (std::size_t o = 0; o < s.cout; ++o) {
      float* plane = yi + o * hw;
      const float bo = b[o];
      if (relu) {
        for (std::size_t j = 0; j < hw; ++j) plane[j] = std::max(plane[j] + bo, 0.0f);
      } else {
        for (std::size_t j = 0; j < hw; ++j) plane[j] += bo;
      }
    }
  }
}

void conv2d_backward(const conv_shape& s, const float* x, const float* wt, const float* y,
                     float* dy, float* dx, float* dw, float* db, std::size_t n, float* col,
                     float* dcol, bool relu) {
  const std::size_t hw = s.h * s.w;
  const int M = static_cast<int>(s.cout), N = static_cast<int>(hw),
            K = static_cast<int>(s.col_rows());
  std::memset(db, 0, s.cout * sizeof(float));
  if (n == 0) std::memset(dw, 0, s.cout * s.col_rows() * sizeof(float));
  for (std::size_t i = 0; i < n; ++i) {
    const float* xi = x + i * s.in_size();
    float* gi = dy + i * s.out_size();
    for (std::size_t o = 0; o < s.cout; ++o) {
      float* g = gi + o * hw;
      float acc = 0.0f;
      if (relu) {
        const float* a = y + i * s.out_size() + o * hw;
        for (std::size_t j = 0; j < hw; ++j) {
          g[j] = a[j] > 0.0f ? g[j] : 0.0f;
          acc += g[j];
        }
      } else {
        for (std::size_t j = 0; j < hw; ++j) acc += g[j];
      }
      db[o] += acc;
    }
    const float* ci = xi;
    if (s.k != 1) {
      im2col(s, xi, col);
      ci = col;
    }
    // dW[cout, c*k*k] (+)= dy_i[cout, hw] col^T; the first sample overwrites.
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, K, N, 1.0f, gi, N, ci, N,
                i == 0 ? 0.0f : 1.0f, dw, K);
    if (dx == nullptr) continue;
    float* dxi = dx + i * s.in_size();
    if (s.k == 1) {
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, K, N, M, 1.0f, wt, K, gi, N, 0.0f, dxi,
                  N);
    } else {
      // dcol[c*k*k, hw] = W^T dy_i, then scattered back onto the input grid.
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, K, N, M, 1.0f, wt, K, gi, N, 0.0f, dcol,
                  N);
      std::memset(dxi, 0, s.in_size() * sizeof(float));
      col2im(s, dcol, dxi);
    }
  }
}

void conv2d_gemms(const conv_shape& s, std::size_t n, bool need_dx,
                  std::vector<gemm_shape>& gemms) {
  if (n == 0) return;
  const std::size_t hw = s.h * s.w;
  // One call per sample each, with the transposes and sizes of the cblas_sgemm calls above.
  gemms.push_back({false, false, s.cout, hw, s.col_rows(), n});
  gemms.push_back({false, true, s.cout, s.col_rows(), hw, n});
  if (need_dx) gemms.push_back({true, false, s.col_rows(), hw, s.cout, n});
}

}  // namespace troupe::models::layers
