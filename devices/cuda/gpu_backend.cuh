#pragma once
// Where the cuda backend's work runs: on a GPU (CUDA kernels and cuBLAS on one stream), or, for
// tests on machines without one, as plain loops and OpenBLAS on the host. Both run the same
// element functors (gpu_kernels.cuh) and the same column-major GEMM calls, so a host test checks
// every index computation and every BLAS argument that the GPU path uses; only the launch and the
// library differ.
#include <cblas.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstring>
#include <string>

#include "core/error.hpp"
#include "devices/cuda/gpu_program.hpp"

namespace troupe::devices::gpu {

// A CUDA error as a runtime_failure whose text the supervisor classifies: "out of memory
// (cudaErrorMemoryAllocation)" is an out-of-memory failure, any other "CUDA error" a device error.
[[noreturn]] inline void fail_cuda(cudaError_t e, const std::string& what) {
  throw runtime_failure("CUDA error: " + std::string(cudaGetErrorString(e)) + " (" +
                        cudaGetErrorName(e) + ") in " + what);
}

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) fail_cuda(e, what);
}

inline const char* blas_status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR:
      return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    default:
      return "CUBLAS_STATUS_UNKNOWN";
  }
}

inline void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw runtime_failure(std::string("cuBLAS error: ") + blas_status_name(s) + " in " + what);
}

template <class F>
__global__ void for_each_kernel(std::size_t n, F f) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) f(i);
}

class backend {
 public:
  backend(target where, int ordinal);
  ~backend();
  backend(const backend&) = delete;
  backend& operator=(const backend&) = delete;

  bool host() const { return where_ == target::host; }
  // Makes this backend's GPU the calling thread's current device: actors move between threads.
  void activate() const;
  cudaStream_t stream() const { return stream_; }
  int ordinal() const { return ordinal_; }

  // f(i) for i in [0, n): a kernel of 256-thread blocks on the stream, or a loop on the host.
  template <class F>
  void each(std::size_t n, F f) const {
    if (n == 0) return;
    if (host()) {
      for (std::size_t i = 0; i < n; ++i) f(i);
      return;
    }
    const unsigned blocks = static_cast<unsigned>((n + 255) / 256);
    for_each_kernel<<<blocks, 256, 0, stream_>>>(n, f);
    check(cudaGetLastError(), "a kernel launch");
  }

  // Row-major C[M,N] = alpha op(A)[M,K] op(B)[K,N] + beta C, lda/ldb/ldc the row strides. It is
  // the column-major product C^T = op(B)^T op(A)^T with the same flags, which is what both
  // libraries are called with.
  void gemm_rm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, const float* a,
               std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
               std::size_t ldc) const;
  // y[rows] = A[rows, cols] x for a column-major A (leading dimension lda), or A^T x (y[cols]).
  void gemv_cm(bool trans, std::size_t rows, std::size_t cols, const float* a, std::size_t lda,
               const float* x, float* y) const;

  void* allocate(std::size_t bytes, const std::string& what) const;
  void release(void* p) const;
  void zero(void* p, std::size_t bytes) const;
  void to_device(void* dst, const void* src, std::size_t bytes) const;
  void to_host(void* dst, const void* src, std::size_t bytes) const;
  void synchronize(const char* what) const;

 private:
  void copy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
            const char* what) const;

  target where_;
  int ordinal_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  void* workspace_ = nullptr;
};

// Memory of `count` T on the backend, freed with it.
template <class T>
class buffer {
 public:
  buffer() = default;
  buffer(const backend& be, std::size_t count, const std::string& what)
      : be_(&be), count_(count), p_(static_cast<T*>(be.allocate(count * sizeof(T), what))) {}
  ~buffer() {
    if (p_) be_->release(p_);
  }
  buffer(buffer&& o) noexcept : be_(o.be_), count_(o.count_), p_(o.p_) { o.p_ = nullptr; }
  buffer& operator=(buffer&& o) noexcept {
    if (this != &o) {
      if (p_) be_->release(p_);
      be_ = o.be_;
      count_ = o.count_;
      p_ = o.p_;
      o.p_ = nullptr;
    }
    return *this;
  }
  T* get() const { return p_; }
  std::size_t size() const { return count_; }

 private:
  const backend* be_ = nullptr;
  std::size_t count_ = 0;
  T* p_ = nullptr;
};

}  // namespace troupe::devices::gpu
