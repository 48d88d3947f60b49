#pragma once
// The cuda backend's element-wise work as functors of one index, run by backend::each as a CUDA
// kernel or as a host loop. Each mirrors one loop of the CPU layers (models/layers/*.cpp), with
// the same arithmetic in the same precision, so a GPU step matches a CPU step up to the order of
// the GEMMs' sums. Layouts: activations are row-major [n, features] (NCHW for images), as on the
// CPU; a convolution's GEMM works on [channels, n * h * w] ("CNHW") so one GEMM covers the batch.
#include <cstddef>
#include <cstdint>

#include <math.h>

namespace troupe::devices::gpu::kernels {

// y[r, j] = act(y[r, j] + b[j]) over n * out elements.
struct bias_act {
  float* y;
  const float* b;
  std::size_t out;
  bool relu;
  __host__ __device__ void operator()(std::size_t e) const {
    const float v = y[e] + b[e % out];
    y[e] = relu ? (v > 0.0f ? v : 0.0f) : v;
  }
};

// A dense layer's bias gradient, one thread per output feature: db[j] = sum over rows of dy[r,
// j], masked in place by the ReLU (dy = y > 0 ? dy : 0) when relu. The rows are summed in order in
// float, as the CPU loop does, and one launch does what a mask and a GEMV would do in two.
struct dense_bias_grad {
  float* dy;
  const float* y;
  float* db;
  std::size_t n, out;
  bool relu;
  __host__ __device__ void operator()(std::size_t j) const {
    float acc = 0.0f;
    for (std::size_t r = 0; r < n; ++r) {
      float g = dy[r * out + j];
      if (relu) {
        g = y[r * out + j] > 0.0f ? g : 0.0f;
        dy[r * out + j] = g;
      }
      acc += g;
    }
    db[j] = acc;
  }
};

// Adds to a statistic: an atomic on the device (the batch's samples run in parallel), a plain add
// in the host loop.
__host__ __device__ inline void add_to(double* where, double v) {
#ifdef __CUDA_ARCH__
  atomicAdd(where, v);
#else
  *where += v;
#endif
}

// x[i, :] = data[order[*cursor + i], :] over n * features elements: the batch gathered on the
// device from the resident training set.
struct gather_rows {
  float* x;
  std::int32_t* labels;
  const float* data;
  const std::int32_t* data_labels;
  const std::int64_t* order;
  const std::int64_t* cursor;
  std::size_t features;
  __host__ __device__ void operator()(std::size_t e) const {
    const std::size_t i = e / features, f = e % features;
    const std::int64_t row = order[*cursor + static_cast<std::int64_t>(i)];
    x[e] = data[static_cast<std::size_t>(row) * features + f];
    if (f == 0) labels[i] = data_labels[row];
  }
};

// col[kr, i*hw + p] = x[i, ci, oy + ki - k/2, ox + kj - k/2] (zero outside), kr = (ci*k + ki)*k
// + kj, over c*k*k * n*hw elements: the batch's im2col in one matrix.
struct im2col {
  float* col;
  const float* x;
  std::size_t c, h, w, k, n;
  __host__ __device__ void operator()(std::size_t e) const {
    const std::size_t hw = h * w, cols = n * hw;
    const std::size_t kr = e / cols, rem = e % cols;
    const std::size_t i = rem / hw, pos = rem % hw;
    const std::size_t ci = kr / (k * k), ki = (kr / k) % k, kj = kr % k;
    const long p = static_cast<long>(k / 2);
    const long iy = static_cast<long>(pos / w) + static_cast<long>(ki) - p;
    const long ix = static_cast<long>(pos % w) + static_cast<long>(kj) - p;
    const bool inside =
        iy >= 0 && iy < static_cast<long>(h) && ix >= 0 && ix < static_cast<long>(w);
    col[e] = inside ? x[i * c * hw + ci * hw + static_cast<std::size_t>(iy) * w +
                        static_cast<std::size_t>(ix)]
                    : 0.0f;
  }
};

// dx[i, ci, iy, ix] = sum over (ki, kj) of dcol[(ci*k + ki)*k + kj, i*hw + (iy - ki + p)*w +
// (ix - kj + p)]: col2im as a gather (each input element sums its own terms; no atomics), in
// the CPU's (ki, kj) order.
struct col2im {
  float* dx;
  const float* dcol;
  std::size_t c, h, w, k, n;
  __host__ __device__ void operator()(std::size_t e) const {
    const std::size_t hw = h * w, cols = n * hw;
    const std::size_t i = e / (c * hw), rem = e % (c * hw);
    const std::size_t ci = rem / hw, pos = rem % hw;
    const long iy = static_cast<long>(pos / w), ix = static_cast<long>(pos % w);
    const long p = static_cast<long>(k / 2);
    float acc = 0.0f;
    for (std::size_t ki = 0; ki < k; ++ki) {
      const long oy = iy - static_cast<long>(ki) + p;
      if (oy < 0 || oy >= static_cast<long>(h)) continue;
      for (std::size_t kj = 0; kj < k; ++kj) {
        const long ox = ix - static_cast<long>(kj) + p;
        if (ox < 0 || ox >= static_cast<long>(w)) continue;
        const std::size_t kr = (ci * k + ki) * k + kj;
        acc += dcol[kr * cols + i * hw + static_cast<std::size_t>(oy) * w +
                    static_cast<std::size_t>(ox)];
      }
    }
    dx[e] = acc;
  }
};

// Where element e of an NCHW tensor of n * cout * hw stands in its CNHW copy (the conv GEMM's
// layout: t[o, i*hw + p]).
__host__ __device__ inline std::size_t cnhw_index(std::size_t e, std::size_t cout, std::size_t hw,
                                                  std::size_t n) {
  const std::size_t i = e / (cout * hw), rem = e % (cout * hw);
  const std::size_t o = rem / hw, p = rem % hw;
  return o * n * hw + i * hw + p;
}

// y[i, o, p] = act(t[o, i*hw + p] + b[o]) over n * cout * hw: the conv GEMM's CNHW result back
// to NCHW, with bias and ReLU.
struct cnhw_to_nchw {
  float* y;
  const float* t;
  const float* b;
  std::size_t cout, hw, n;
  bool relu;
  __host__ __device__ void operator()(std::size_t e) const {
    const float v = t[cnhw_index(e, cout, hw, n)] + b[(e / hw) % cout];
    y[e] = relu ? (v > 0.0f ? v : 0.0f) : v;
  }
};

// t[o, i*hw + p] = mask(dy[i, o, p]) over n * cout * hw: the output gradient to CNHW, through
// the ReLU when relu.
struct nchw_to_cnhw {
  float* t;
  const float* dy;
  const float* y;
  std::size_t cout, hw, n;
  bool relu;
  __host__ __device__ void operator()(std::size_t e) const {
    t[cnhw_index(e, cout, hw, n)] = relu ? (y[e] > 0.0f ? dy[e] : 0.0f) : dy[e];
  }
};

// 2x2 max-pool, the CPU's tie rule (first of top-left, top-right, bottom-left, bottom-right that
// is strictly larger), over n * c * (h/2) * (w/2) outputs.
struct maxpool2_forward {
  float* y;
  std::int32_t* arg;
  const float* x;
  std::size_t c, h, w;
  __host__ __device__ void operator()(std::size_t e) const {
    const std::size_t oh = h / 2, ow = w / 2, out = c * oh * ow;
    const std::size_t i = e / out, rem = e % out;
    const std::size_t ch = rem / (oh * ow), oy = (rem / ow) % oh, ox = rem % ow;
    const float* xi = x + i * c * h * w;
    std::size_t best = (ch * h + 2 * oy) * w + 2 * ox;
    const std::size_t cand[3] = {best + 1, best + w, best + w + 1};
    for (std::size_t j : cand)
      if (xi[j] > xi[best]) best = j;
    y[e] = xi[best];
    arg[e] = static_cast<std::int32_t>(best);
  }
};

// dx[i, arg] = dy over the outputs; dx was zeroed and each input is at most one window's argmax.
struct maxpool2_backward {
  float* dx;
  const float* dy;
  const std::int32_t* arg;
  std::size_t in_size, out_size;
  __host__ __device__ void operator()(std::size_t e) const {
    dx[(e / out_size) * in_size + static_cast<std::size_t>(arg[e])] = dy[e];
  }
};

// Softmax cross-entropy per sample, as layers::softmax_cross_entropy: the unweighted loss into
// raw, whether the argmax is the label, both added to acc (the loss weighted), and the logits'
// gradient when dlogits is set. Labels were checked to be in [0, k) on the host.
struct softmax_xent {
  const float* z;
  const std::int32_t* labels;
  const float* weights;  // may be null
  float* dlogits;        // may be null
  float* raw;
  float* correct;
  double* acc;  // {loss sum, correct count}, added to
  std::size_t k;
  __host__ __device__ void operator()(std::size_t i) const {
    const float* zi = z + i * k;
    const std::int32_t label = labels[i];
    std::size_t arg = 0;
    for (std::size_t j = 1; j < k; ++j)
      if (zi[j] > zi[arg]) arg = j;
    const float zmax = zi[arg];
    double sum = 0.0;
    for (std::size_t j = 0; j < k; ++j) sum += exp(static_cast<double>(zi[j] - zmax));
    const double lse = log(sum);
    const double w = weights ? weights[i] : 1.0;
    const double li = lse - static_cast<double>(zi[label] - zmax);
    raw[i] = static_cast<float>(li);
    correct[i] = arg == static_cast<std::size_t>(label) ? 1.0f : 0.0f;
    add_to(acc, w * li);
    add_to(acc + 1, correct[i]);
    if (dlogits) {
      float* g = dlogits + i * k;
      const double scale = w / sum;
      for (std::size_t j = 0; j < k; ++j)
        g[j] = static_cast<float>(scale * exp(static_cast<double>(zi[j] - zmax)));
      g[label] -= static_cast<float>(w);
    }
  }
};

// Half the squared error per sample, as layers::squared_error.
struct squared_error {
  const float* y;
  const float* targets;
  const float* weights;  // may be null
  float* dy;             // may be null
  float* raw;
  float* correct;
  double* acc;
  __host__ __device__ void operator()(std::size_t i) const {
    const double w = weights ? weights[i] : 1.0;
    const double r = static_cast<double>(y[i]) - targets[i];
    add_to(acc, 0.5 * w * r * r);
    raw[i] = static_cast<float>(0.5 * r * r);
    correct[i] = 0.0f;
    if (dy) dy[i] = static_cast<float>(w * r);
  }
};

// The optimizer's step counter on the device, so a captured step needs no host value that
// changes: the update reads t + 1, and the step's last kernel (advance) counts it.
struct optimizer_scalars {
  std::int64_t t;
};

// g' = scale * g: the mean gradient, as the CPU path's `g *= 1 / samples` before its step.
__host__ __device__ inline float mean_grad(const float* g, std::size_t i, float scale) {
  return g[i] * scale;
}

// The update rules of models/sgd.cpp and models/adam.cpp, element by element.
struct sgd_update {
  float* p;
  const float* g;
  float scale, lr, wd;
  __host__ __device__ void operator()(std::size_t i) const {
    p[i] -= lr * (mean_grad(g, i, scale) + wd * p[i]);
  }
};

struct momentum_update {
  float* p;
  float* v;
  const float* g;
  float scale, lr, wd, mu;
  bool nesterov;
  __host__ __device__ void operator()(std::size_t i) const {
    const float gi = mean_grad(g, i, scale) + wd * p[i];
    v[i] = mu * v[i] + gi;
    p[i] -= lr * (nesterov ? gi + mu * v[i] : v[i]);
  }
};

struct adam_update {
  float* p;
  float* m;
  float* v;
  const float* g;
  const optimizer_scalars* s;
  float scale, lr, eps, l2, shrink;
  double beta1, beta2;
  __host__ __device__ void operator()(std::size_t i) const {
    // Bias corrections as the CPU computes them (in double, then float): a few flops per element
    // cost less than a launch of their own.
    const double t = static_cast<double>(s->t + 1);
    const float inv_bc1 = static_cast<float>(1.0 / (1.0 - pow(beta1, t)));
    const float inv_bc2 = static_cast<float>(1.0 / (1.0 - pow(beta2, t)));
    const float b1 = static_cast<float>(beta1), b2 = static_cast<float>(beta2);
    const float gi = mean_grad(g, i, scale) + l2 * p[i];
    m[i] = b1 * m[i] + (1.0f - b1) * gi;
    v[i] = b2 * v[i] + (1.0f - b2) * gi * gi;
    p[i] = shrink * p[i] - lr * (m[i] * inv_bc1) / (sqrtf(v[i] * inv_bc2) + eps);
  }
};

// The step's last kernel: the resident order's cursor moves past the rows it used, and the
// optimizer's step counter counts it.
struct advance {
  std::int64_t* cursor;
  optimizer_scalars* s;
  std::int64_t n;
  __host__ __device__ void operator()(std::size_t) const {
    *cursor += n;
    s->t += 1;
  }
};

}  // namespace troupe::devices::gpu::kernels
