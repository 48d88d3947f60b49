#include "devices/cuda/gpu_faults.hpp"

#include <cstddef>
#include <string>

#include "devices/cuda/gpu_backend.cuh"

namespace troupe::devices::gpu {
namespace {
__global__ void empty_kernel() {}
}  // namespace

void provoke_out_of_memory(int ordinal) {
  check(cudaSetDevice(ordinal), "cudaSetDevice");
  std::size_t free_bytes = 0, total = 0;
  check(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
  const std::size_t ask = free_bytes + (std::size_t{1} << 30);
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, ask);
  if (e == cudaSuccess) {
    cudaFree(p);
    throw runtime_failure("cuda:" + std::to_string(ordinal) + " granted " + std::to_string(ask) +
                          " bytes with " + std::to_string(free_bytes) + " free");
  }
  cudaGetLastError();  // not sticky: the device stays usable
  fail_cuda(e, "cudaMalloc of " + std::to_string(ask) + " bytes (" + std::to_string(free_bytes) +
                   " free) on cuda:" + std::to_string(ordinal));
}

void provoke_device_error(int ordinal) {
  check(cudaSetDevice(ordinal), "cudaSetDevice");
  // 2048 threads a block is more than any CUDA device takes: the launch fails at once.
  empty_kernel<<<1, 2048>>>();
  const cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess)
    throw runtime_failure("cuda:" + std::to_string(ordinal) + " accepted a 2048-thread block");
  fail_cuda(e, "a kernel launch on cuda:" + std::to_string(ordinal));
}

}  // namespace troupe::devices::gpu
