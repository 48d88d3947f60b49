#include "models/layers/dense.hpp"

#include <cblas.h>

#include <algorithm>
#include <cstring>

namespace troupe::models::layers {

void dense_forward(const float* x, const float* w, const float* b, float* y, std::size_t n,
                   std::size_t in, std::size_t out, bool relu) {
  const int N = static_cast<int>(n), I = static_cast<int>(in), O = static_cast<int>(out);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, O, I, 1.0f, x, I, w, I, 0.0f, y, O);
  for (std::size_t r = 0; r < n; ++r) {
    float* row = y + r * out;
    if (relu) {
      for (std::size_t j = 0; j < out; ++j) row[j] = std::max(row[j] + b[j], 0.0f);
    } else {
      for (std::size_t j = 0; j < out; ++j) row[j] += b[j];
    }
  }
}

void dense_backward(const float* x, const float* w, const float* y, float* dy, float* dx, float* dw,
                    float* db, std::size_t n, std::size_t in, std::size_t out, bool relu) {
  const int N = static_cast<int>(n), I = static_cast<int>(in), O = static_cast<int>(out);
  // One pass over dy both applies the ReLU mask and sums the bias gradient.
  std::memset(db, 0, out * sizeof(float));
  for (std::size_t r = 0; r < n; ++r) {
    float* g = dy + r * out;
    if (relu) {
      const float* a = y + r * out;
      for (std::size_t j = 0; j < out; ++j) {
        g[j] = a[j] > 0.0f ? g[j] : 0.0f;
        db[j] += g[j];
      }
    } else {
      for (std::size_t j = 0; j < out; ++j) db[j] += g[j];
    }
  }
  if (n == 0) {
    std::memset(dw, 0, in * out * sizeof(float));
    return;
  }
  // dW[out,in] = dy^T x
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, O, I, N, 1.0f, dy, O, x, I, 0.0f, dw, I);
  // dX[n,in] = dy W
  if (dx != nullptr)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, I, O, 1.0f, dy, O, w, I, 0.0f, dx, I);
}

void dense_gemms(std::size_t n, std::size_t in, std::size_t out, bool need_dx,
                 std::vector<gemm_shape>& gemms) {
  if (n == 0) return;  // nothing to multiply
  // The same calls, transposes and sizes as the cblas_sgemm calls above.
  gemms.push_back({false, true, n, out, in, 1});
  gemms.push_back({true, false, out, in, n, 1});
  if (need_dx) gemms.push_back({false, false, n, in, out, 1});
}

}  // namespace troupe::models::layers
