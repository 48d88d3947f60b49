#include "models/layers/conv.hpp"

#include <cblas.h>

#include <algorithm>
#include <cstring>

#include "core/cpu_features.hpp"

namespace troupe::models::layers {

namespace {

// Where one kernel tap (ki, kj) reads: output pixel j = oy*w + ox takes input pixel
// j + offset, offset = dy*w + dx, when oy + dy and ox + dx both lie inside the image. Seen as flat
// arrays, one tap's column row is the input plane shifted by `offset`, so it is ONE contiguous
// run [first, last) plus fix-ups: the |dx| columns at each row's edge that the flat shift takes
// from the neighbouring row, and the rows above or below the image, are zero padding. This does
// a k x k kernel's im2col in k*k long copies per channel instead of k*k*h short ones per row,
// which cost more than the GEMM that reads them.
struct tap {
  long offset, dx;
  std::size_t row_lo, row_hi;  // output rows oy with oy + dy inside [0, h)
  std::size_t first, last;     // the flat run, clipped so it never reads outside the plane
};

tap tap_of(const conv_shape& s, std::size_t ki, std::size_t kj) {
  const long p = static_cast<long>(s.k / 2), w = static_cast<long>(s.w), h = static_cast<long>(s.h);
  tap t;
  const long dy = static_cast<long>(ki) - p;
  t.dx = static_cast<long>(kj) - p;
  t.offset = dy * w + t.dx;
  // Signed throughout: with a kernel wider than the image a tap may have no rows at all.
  const long lo = std::clamp(-dy, 0L, h), hi = std::clamp(h - dy, lo, h);
  // The run's ends are columns that a shift of dx pushes off the image anyway: zero below.
  const long first = std::min(lo * w + std::max(0L, -t.dx), hi * w);
  const long last = std::max(hi * w - std::max(0L, t.dx), first);
  t.row_lo = static_cast<std::size_t>(lo);
  t.row_hi = static_cast<std::size_t>(hi);
  t.first = static_cast<std::size_t>(first);
  t.last = static_cast<std::size_t>(last);
  return t;
}

// Zeroes row[j] for every flat output index j of the rows [row_lo, row_hi) whose column ox + dx
// falls off the image. Column by column: row by row, the compiler turned each row's one or two
// entries into a memset call, 2016 of them per sample in the CNN's second conv.
__attribute__((always_inline)) inline void zero_edge_columns(const conv_shape& s, const tap& t,
                                                             float* row) {
  const std::size_t width = std::min(static_cast<std::size_t>(t.dx < 0 ? -t.dx : t.dx), s.w);
  const std::size_t lo = t.dx < 0 ? 0 : s.w - width;
  for (std::size_t ox = lo; ox < lo + width; ++ox)
    for (std::size_t oy = t.row_lo; oy < t.row_hi; ++oy) row[oy * s.w + ox] = 0.0f;
}

// Masks g by a > 0 when a is set (the ReLU's gradient) and returns the sum of the result, in one
// pass, in `lanes` interleaved partial sums: a single running sum is one long chain of dependent
// adds (4 cycles each), which made the bias gradient of a 28x28 plane cost as much as its share
// of the convolution; independent lanes vectorize.
__attribute__((always_inline)) inline float mask_and_sum(float* g, const float* a,
                                                         std::size_t count) {
  constexpr std::size_t lanes = 16;
  float part[lanes] = {};
  std::size_t j = 0;
  if (a != nullptr) {
    for (; j + lanes <= count; j += lanes)
      for (std::size_t l = 0; l < lanes; ++l) {
        g[j + l] = a[j + l] > 0.0f ? g[j + l] : 0.0f;
        part[l] += g[j + l];
      }
    for (std::size_t t = j; t < count; ++t) g[t] = a[t] > 0.0f ? g[t] : 0.0f;
  } else {
    for (; j + lanes <= count; j += lanes)
      for (std::size_t l = 0; l < lanes; ++l) part[l] += g[j + l];
  }
  float sum = 0.0f;
  for (; j < count; ++j) sum += g[j];
  for (float p : part) sum += p;
  return sum;
}

// Calls f(t, ci, row) for each tap (ki, kj) and channel ci, taps outermost, so that each tap's
// geometry is worked out once for all channels (per channel, it showed at over 1% of a CNN step);
// `row` is where that tap and channel's row starts in the column matrix.
template <class F>
__attribute__((always_inline)) inline void for_each_tap_row(const conv_shape& s, F&& f) {
  const std::size_t hw = s.h * s.w, taps = s.k * s.k;
  for (std::size_t ki = 0; ki < s.k; ++ki) {
    for (std::size_t kj = 0; kj < s.k; ++kj) {
      const tap t = tap_of(s, ki, kj);
      for (std::size_t ci = 0; ci < s.c; ++ci) f(t, ci, (ci * taps + ki * s.k + kj) * hw);
    }
  }
}

__attribute__((always_inline)) inline void im2col_body(const conv_shape& s, const float* x,
                                                       float* col) {
  const std::size_t hw = s.h * s.w;
  for_each_tap_row(
      s, [&](const tap& t, std::size_t ci, std::size_t at) __attribute__((always_inline)) {
        const float* plane = x + ci * hw;
        float* row = col + at;
        std::fill(row, row + t.first, 0.0f);
        if (t.last > t.first)
          std::memcpy(row + t.first, plane + (static_cast<long>(t.first) + t.offset),
                      (t.last - t.first) * sizeof(float));
        std::fill(row + t.last, row + hw, 0.0f);
        zero_edge_columns(s, t, row);
      });
}

// Each input pixel still sums its taps in (ki, kj) order, as a channel-outer walk would.
__attribute__((always_inline)) inline void col2im_body(const conv_shape& s, float* dcol,
                                                       float* dx_out) {
  const std::size_t hw = s.h * s.w;
  for_each_tap_row(
      s, [&](const tap& t, std::size_t ci, std::size_t at) __attribute__((always_inline)) {
        float* row = dcol + at;
        // The padding entries would land on a neighbouring row's pixels: make
        // them add nothing, so one flat loop (which vectorizes) does the tap.
        zero_edge_columns(s, t, row);
        if (t.last == t.first) return;
        float* in = dx_out + ci * hw + (static_cast<long>(t.first) + t.offset);
        const float* g = row + t.first;
        for (std::size_t j = 0; j < t.last - t.first; ++j) in[j] += g[j];
      });
}

__attribute__((always_inline)) inline void forward_body(const conv_shape& s, const float* x,
                                                        const float* wt, const float* b, float* y,
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
      im2col_body(s, xi, col);
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

__attribute__((always_inline)) inline void backward_body(const conv_shape& s, const float* x,
                                                         const float* wt, const float* y, float* dy,
                                                         float* dx, float* dw, float* db,
                                                         std::size_t n, float* col, float* dcol,
                                                         bool relu, bool accumulate) {
  const std::size_t hw = s.h * s.w;
  const int M = static_cast<int>(s.cout), N = static_cast<int>(hw),
            K = static_cast<int>(s.col_rows());
  if (!accumulate) {
    std::memset(db, 0, s.cout * sizeof(float));
    if (n == 0) std::memset(dw, 0, s.cout * s.col_rows() * sizeof(float));
  }
  for (std::size_t i = 0; i < n; ++i) {
    const float* xi = x + i * s.in_size();
    float* gi = dy + i * s.out_size();
    for (std::size_t o = 0; o < s.cout; ++o) {
      float* g = gi + o * hw;
      db[o] += mask_and_sum(g, relu ? y + i * s.out_size() + o * hw : nullptr, hw);
    }
    const float* ci = xi;
    if (s.k != 1) {
      im2col_body(s, xi, col);
      ci = col;
    }
    // dW[cout, c*k*k] (+)= dy_i[cout, hw] col^T; the first sample overwrites.
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, K, N, 1.0f, gi, N, ci, N,
                i == 0 && !accumulate ? 0.0f : 1.0f, dw, K);
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
      col2im_body(s, dcol, dxi);
    }
  }
}

// The element-wise passes (bias and ReLU, the ReLU mask and bias gradient, col2im's sums) are
// compiled twice, for the baseline ISA and for AVX2 with twice the lanes, and picked at run
// time. Neither copy enables FMA and every sum keeps its order, so both give the same bits.
void forward_baseline(const conv_shape& s, const float* x, const float* wt, const float* b,
                      float* y, std::size_t n, float* col, bool relu) {
  forward_body(s, x, wt, b, y, n, col, relu);
}
void backward_baseline(const conv_shape& s, const float* x, const float* wt, const float* y,
                       float* dy, float* dx, float* dw, float* db, std::size_t n, float* col,
                       float* dcol, bool relu, bool accumulate) {
  backward_body(s, x, wt, y, dy, dx, dw, db, n, col, dcol, relu, accumulate);
}
void col2im_baseline(const conv_shape& s, float* dcol, float* dx) {
  col2im_body(s, dcol, dx);
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) void forward_avx2(const conv_shape& s, const float* x,
                                                  const float* wt, const float* b, float* y,
                                                  std::size_t n, float* col, bool relu) {
  forward_body(s, x, wt, b, y, n, col, relu);
}
__attribute__((target("avx2"))) void backward_avx2(const conv_shape& s, const float* x,
                                                   const float* wt, const float* y, float* dy,
                                                   float* dx, float* dw, float* db, std::size_t n,
                                                   float* col, float* dcol, bool relu,
                                                   bool accumulate) {
  backward_body(s, x, wt, y, dy, dx, dw, db, n, col, dcol, relu, accumulate);
}
__attribute__((target("avx2"))) void col2im_avx2(const conv_shape& s, float* dcol, float* dx) {
  col2im_body(s, dcol, dx);
}
#endif

}  // namespace

void im2col(const conv_shape& s, const float* x, float* col) {
  im2col_body(s, x, col);
}

void col2im(const conv_shape& s, float* dcol, float* dx) {
#if defined(__x86_64__)
  if (cpu_has_avx2()) return col2im_avx2(s, dcol, dx);
#endif
  col2im_baseline(s, dcol, dx);
}

void conv2d_forward(const conv_shape& s, const float* x, const float* wt, const float* b, float* y,
                    std::size_t n, float* col, bool relu) {
#if defined(__x86_64__)
  if (cpu_has_avx2()) return forward_avx2(s, x, wt, b, y, n, col, relu);
#endif
  forward_baseline(s, x, wt, b, y, n, col, relu);
}

void conv2d_backward(const conv_shape& s, const float* x, const float* wt, const float* y,
                     float* dy, float* dx, float* dw, float* db, std::size_t n, float* col,
                     float* dcol, bool relu, bool accumulate) {
#if defined(__x86_64__)
  if (cpu_has_avx2())
    return backward_avx2(s, x, wt, y, dy, dx, dw, db, n, col, dcol, relu, accumulate);
#endif
  backward_baseline(s, x, wt, y, dy, dx, dw, db, n, col, dcol, relu, accumulate);
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
