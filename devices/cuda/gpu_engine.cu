#include "devices/cuda/gpu_engine.cuh"

#include "core/clock.hpp"
#include "devices/cuda/cublas_library.hpp"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace troupe::devices::gpu {

// ---- backend ----------------------------------------------------------------------------------

namespace {
// cuBLAS allocates from its workspace during a captured graph only when given one; 32 MiB is what
// NVIDIA advises for Hopper.
constexpr std::size_t workspace_bytes = std::size_t{32} << 20;
}  // namespace

backend::backend(target where, int ordinal) : where_(where), ordinal_(ordinal) {
  if (host()) return;
  check(cudaSetDevice(ordinal), "cudaSetDevice");
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cublas().create(&blas_), "cublasCreate");
  // Plain FP32: TF32 would trade the CPU path's precision for speed and break equivalence.
  check(cublas().set_math_mode(blas_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  // Setting the stream resets the workspace: the workspace is set after it.
  check(cublas().set_stream(blas_, stream_), "cublasSetStream");
  check(cudaMalloc(&workspace_, workspace_bytes), "cudaMalloc (cuBLAS workspace)");
  check(cublas().set_workspace(blas_, workspace_, workspace_bytes), "cublasSetWorkspace");
}

backend::~backend() {
  if (host()) return;
  // Teardown errors (a context already broken by a device error) are not worth a throw here.
  if (blas_) cublas().destroy(blas_);
  if (workspace_) cudaFree(workspace_);
  if (stream_) cudaStreamDestroy(stream_);
  cudaGetLastError();
}

void backend::activate() const {
  if (!host()) check(cudaSetDevice(ordinal_), "cudaSetDevice");
}

void backend::gemm_rm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, const float* a,
                      std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
                      std::size_t ldc) const {
  if (m == 0 || n == 0) return;
  const float one = 1.0f;
  const int M = static_cast<int>(m), N = static_cast<int>(n), K = static_cast<int>(k);
  const int LDA = static_cast<int>(lda), LDB = static_cast<int>(ldb), LDC = static_cast<int>(ldc);
  if (host()) {
    cblas_sgemm(CblasColMajor, tb ? CblasTrans : CblasNoTrans, ta ? CblasTrans : CblasNoTrans, N, M,
                K, one, b, LDB, a, LDA, beta, c, LDC);
    return;
  }
  check(cublas().sgemm(blas_, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, N, M,
                       K, &one, b, LDB, a, LDA, &beta, c, LDC),
        "cublasSgemm");
}

void backend::gemv_cm(bool trans, std::size_t rows, std::size_t cols, const float* a,
                      std::size_t lda, const float* x, float* y) const {
  const float one = 1.0f, zero = 0.0f;
  const int R = static_cast<int>(rows), C = static_cast<int>(cols), LDA = static_cast<int>(lda);
  if (host()) {
    cblas_sgemv(CblasColMajor, trans ? CblasTrans : CblasNoTrans, R, C, one, a, LDA, x, 1, zero, y,
                1);
    return;
  }
  check(cublas().sgemv(blas_, trans ? CUBLAS_OP_T : CUBLAS_OP_N, R, C, &one, a, LDA, x, 1, &zero, y,
                       1),
        "cublasSgemv");
}

void* backend::allocate(std::size_t bytes, const std::string& what) const {
  if (bytes == 0) bytes = 1;
  if (host()) {
    void* p = std::malloc(bytes);
    if (!p) throw runtime_failure("host backend: out of memory allocating " + what);
    return p;
  }
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e != cudaSuccess) {
    cudaGetLastError();  // an allocation failure is not sticky: clear it for the next call
    fail_cuda(e, "cudaMalloc of " + std::to_string(bytes) + " bytes for " + what +
                     " on cuda:" + std::to_string(ordinal_));
  }
  return p;
}

void backend::release(void* p) const {
  if (host())
    std::free(p);
  else
    cudaFree(p);
}

void backend::zero(void* p, std::size_t bytes) const {
  if (host())
    std::memset(p, 0, bytes);
  else
    check(cudaMemsetAsync(p, 0, bytes, stream_), "cudaMemsetAsync");
}

void backend::copy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                   const char* what) const {
  if (bytes == 0) return;
  if (host())
    std::memcpy(dst, src, bytes);
  else
    check(cudaMemcpyAsync(dst, src, bytes, kind, stream_), what);
}

void backend::to_device(void* dst, const void* src, std::size_t bytes) const {
  copy(dst, src, bytes, cudaMemcpyHostToDevice, "copy to the GPU");
}

void backend::to_host(void* dst, const void* src, std::size_t bytes) const {
  copy(dst, src, bytes, cudaMemcpyDeviceToHost, "copy from the GPU");
}

void backend::synchronize(const char* what) const {
  if (!host()) check(cudaStreamSynchronize(stream_), what);
}

// ---- engine -----------------------------------------------------------------------------------

namespace {

// dense_bias_grad on the GPU: one warp per output feature, the rows strided over its lanes and
// summed with shuffles. One thread per feature walking all rows (the host loop) leaves a whole
// step waiting on a chain of dependent loads.
__global__ void dense_bias_grad_kernel(kernels::dense_bias_grad k) {
  const std::size_t j = static_cast<std::size_t>(blockIdx.x) * blockDim.y + threadIdx.y;
  if (j >= k.out) return;
  float acc = 0.0f;
  for (std::size_t r = threadIdx.x; r < k.n; r += 32) {
    float g = k.dy[r * k.out + j];
    if (k.relu) {
      g = k.y[r * k.out + j] > 0.0f ? g : 0.0f;
      k.dy[r * k.out + j] = g;
    }
    acc += g;
  }
  for (int d = 16; d > 0; d /= 2) acc += __shfl_down_sync(0xffffffffu, acc, d);
  if (threadIdx.x == 0) k.db[j] = acc;
}

struct fill {
  float* p;
  float v;
  __host__ __device__ void operator()(std::size_t i) const { p[i] = v; }
};

}  // namespace

engine::engine(const models::layer_program& p, const program_options& o)
    : be(o.where, o.ordinal),
      p_(p),
      max_batch_(std::max<std::size_t>(o.max_batch, 1)),
      graphs_(o.graphs && o.where == target::cuda) {
  if (p_.layers.empty()) throw input_error("cuda backend: the model has no layers");
  const std::size_t b = max_batch_;
  params = buffer<float>(be, p_.param_count, "parameters");
  grad = buffer<float>(be, p_.param_count, "gradients");
  x = buffer<float>(be, b * p_.input_size, "input rows");
  labels = buffer<std::int32_t>(be, b, "labels");
  targets = buffer<float>(be, b, "targets");
  weights = buffer<float>(be, b, "sample weights");
  raw = buffer<float>(be, b, "losses");
  correct = buffer<float>(be, b, "correct flags");
  acc = buffer<double>(be, 2, "statistics");
  if (o.input_grad) input_grad = buffer<float>(be, b * p_.input_size, "input gradients");
  std::size_t cnhw = 0, dcol = 0, ones = 0;  // ones: the convolutions' bias-gradient sums
  layers_.resize(p_.layers.size());
  for (std::size_t i = 0; i < p_.layers.size(); ++i) {
    const auto& op = p_.layers[i];
    auto& lb = layers_[i];
    lb.act = buffer<float>(be, b * op.out, "activations");
    lb.grad = buffer<float>(be, b * op.out, "activation gradients");
    if (op.op == models::layer_op::kind::conv) {
      const auto& s = op.conv;
      const std::size_t cols = b * s.h * s.w;
      lb.col = buffer<float>(be, s.col_rows() * cols, "im2col columns");
      cnhw = std::max(cnhw, s.cout * cols);
      dcol = std::max(dcol, s.col_rows() * cols);
      ones = std::max(ones, cols);
    } else if (op.op == models::layer_op::kind::maxpool2) {
      lb.arg = buffer<std::int32_t>(be, b * op.out, "pool indices");
    }
  }
  if (cnhw) cnhw_ = buffer<float>(be, cnhw, "conv scratch");
  if (dcol) dcol_ = buffer<float>(be, dcol, "conv scratch");
  if (ones) {
    ones_ = buffer<float>(be, ones, "ones");
    be.each(ones, fill{ones_.get(), 1.0f});
  }
  clear_stats();
  be.synchronize("engine setup");
}

engine::~engine() {
  for (auto& [key, exec] : graphs_by_key_) cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec));
}

const float* engine::input_of(std::size_t i) const {
  return i == 0 ? x.get() : layers_[i - 1].act.get();
}

void engine::clear_stats() {
  be.zero(acc.get(), 2 * sizeof(double));
}

void engine::forward(std::size_t n) {
  for (std::size_t i = 0; i < p_.layers.size(); ++i) forward_layer(i, n);
}

void engine::forward_layer(std::size_t i, std::size_t n) {
  using kind = models::layer_op::kind;
  const float* w = params.get();
  const auto& op = p_.layers[i];
  const float* in = input_of(i);
  float* y = layers_[i].act.get();
  switch (op.op) {
    case kind::dense:
      // y[n,out] = x[n,in] W^T, W stored [out,in]
      be.gemm_rm(false, true, n, op.out, op.in, in, op.in, w + op.weight, op.in, 0.0f, y, op.out);
      be.each(n * op.out, kernels::bias_act{y, w + op.bias, op.out, op.relu});
      break;
    case kind::conv: {
      const auto& s = op.conv;
      const std::size_t hw = s.h * s.w, cols = n * hw;
      float* col = layers_[i].col.get();
      be.each(s.col_rows() * cols, kernels::im2col{col, in, s.c, s.h, s.w, s.k, n});
      // t[cout, n*hw] = W[cout, c*k*k] col[c*k*k, n*hw]
      be.gemm_rm(false, false, s.cout, cols, s.col_rows(), w + op.weight, s.col_rows(), col, cols,
                 0.0f, cnhw_.get(), cols);
      be.each(n * s.cout * hw,
              kernels::cnhw_to_nchw{y, cnhw_.get(), w + op.bias, s.cout, hw, n, op.relu});
      break;
    }
    case kind::maxpool2: {
      const auto& s = op.conv;
      be.each(n * op.out, kernels::maxpool2_forward{y, layers_[i].arg.get(), in, s.c, s.h, s.w});
      break;
    }
  }
}

void engine::loss(std::size_t n, bool with_grad, bool weighted) {
  const float* out = layers_.back().act.get();
  float* dout = with_grad ? layers_.back().grad.get() : nullptr;
  const float* w = weighted ? weights.get() : nullptr;
  if (p_.loss == models::loss_kind::squared_error)
    be.each(n, kernels::squared_error{out, targets.get(), w, dout, raw.get(), correct.get(),
                                      acc.get()});
  else
    be.each(n, kernels::softmax_xent{out, labels.get(), w, dout, raw.get(), correct.get(),
                                     acc.get(), p_.outputs});
}

void engine::backward(std::size_t n) {
  for (std::size_t i = p_.layers.size(); i-- > 0;) backward_layer(i, n);
}

void engine::backward_layer(std::size_t i, std::size_t n) {
  using kind = models::layer_op::kind;
  const float* w = params.get();
  float* g = grad.get();
  const auto& op = p_.layers[i];
  const float* in = input_of(i);
  const float* y = layers_[i].act.get();
  float* dy = layers_[i].grad.get();
  // The first layer's input gradient only when the layers before it run elsewhere.
  float* dx = i > 0 ? layers_[i - 1].grad.get() : input_grad.get();
  switch (op.op) {
    case kind::dense:
      bias_grad(kernels::dense_bias_grad{dy, y, g + op.bias, n, op.out, op.relu});
      // dW[out,in] = dy^T x
      be.gemm_rm(true, false, op.out, op.in, n, dy, op.out, in, op.in, 0.0f, g + op.weight, op.in);
      // dX[n,in] = dy W
      if (dx)
        be.gemm_rm(false, false, n, op.in, op.out, dy, op.out, w + op.weight, op.in, 0.0f, dx,
                   op.in);
      break;
    case kind::conv: {
      const auto& s = op.conv;
      const std::size_t hw = s.h * s.w, cols = n * hw;
      float* t = cnhw_.get();
      be.each(n * s.cout * hw, kernels::nchw_to_cnhw{t, dy, y, s.cout, hw, n, op.relu});
      // db[cout] = t[cout, cols] 1: t is column-major [cols, cout]
      be.gemv_cm(true, cols, s.cout, t, cols, ones_.get(), g + op.bias);
      // dW[cout, c*k*k] = t col^T
      be.gemm_rm(false, true, s.cout, s.col_rows(), cols, t, cols, layers_[i].col.get(), cols, 0.0f,
                 g + op.weight, s.col_rows());
      if (dx) {
        // dcol[c*k*k, cols] = W^T t, then gathered back onto the input grid
        be.gemm_rm(true, false, s.col_rows(), cols, s.cout, w + op.weight, s.col_rows(), t, cols,
                   0.0f, dcol_.get(), cols);
        be.each(n * s.in_size(), kernels::col2im{dx, dcol_.get(), s.c, s.h, s.w, s.k, n});
      }
      break;
    }
    case kind::maxpool2:
      if (dx) {
        be.zero(dx, n * op.in * sizeof(float));
        be.each(n * op.out,
                kernels::maxpool2_backward{dx, dy, layers_[i].arg.get(), op.in, op.out});
      }
      break;
  }
}

std::vector<double> engine::layer_seconds(std::size_t n, bool weighted) {
  const std::size_t L = p_.layers.size();
  std::vector<double> out(L, 0.0);
  // Each layer's forward, then (the loss with the last) its backward, timed apart: CUDA events
  // on the stream, or the host's clock.
  auto timed = [&](std::size_t i, const std::function<void()>& work) {
    if (be.host()) {
      stopwatch sw;
      work();
      out[i] += sw.seconds();
      return;
    }
    cudaEvent_t a = nullptr, b = nullptr;
    check(cudaEventCreate(&a), "cudaEventCreate");
    check(cudaEventCreate(&b), "cudaEventCreate");
    cudaEventRecord(a, be.stream());
    work();
    cudaEventRecord(b, be.stream());
    const cudaError_t e = cudaEventSynchronize(b);
    float ms = 0.0f;
    if (e == cudaSuccess) cudaEventElapsedTime(&ms, a, b);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    check(e, "timing a layer");
    out[i] += ms * 1e-3;
  };
  clear_stats();
  for (std::size_t i = 0; i < L; ++i) timed(i, [&] { forward_layer(i, n); });
  timed(L - 1, [&] { loss(n, true, weighted); });
  for (std::size_t i = L; i-- > 0;) timed(i, [&] { backward_layer(i, n); });
  return out;
}

void engine::bias_grad(const kernels::dense_bias_grad& k) {
  if (be.host()) {
    be.each(k.out, k);
    return;
  }
  const dim3 block(32, 8);
  dense_bias_grad_kernel<<<static_cast<unsigned>((k.out + 7) / 8), block, 0, be.stream()>>>(k);
  check(cudaGetLastError(), "the bias gradient kernel");
}

void engine::run(std::uint64_t key, const std::function<void()>& enqueue) {
  if (!graphs_) {
    enqueue();
    return;
  }
  auto it = graphs_by_key_.find(key);
  if (it == graphs_by_key_.end()) {
    cudaGraph_t graph = nullptr;
    check(cudaStreamBeginCapture(be.stream(), cudaStreamCaptureModeThreadLocal),
          "cudaStreamBeginCapture");
    try {
      enqueue();
    } catch (...) {
      cudaStreamEndCapture(be.stream(), &graph);
      if (graph) cudaGraphDestroy(graph);
      throw;
    }
    check(cudaStreamEndCapture(be.stream(), &graph), "cudaStreamEndCapture");
    cudaGraphExec_t exec = nullptr;
    const cudaError_t e = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    check(e, "cudaGraphInstantiate");
    it = graphs_by_key_.emplace(key, exec).first;
  }
  check(cudaGraphLaunch(static_cast<cudaGraphExec_t>(it->second), be.stream()), "cudaGraphLaunch");
}

}  // namespace troupe::devices::gpu
