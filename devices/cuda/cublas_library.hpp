#pragma once
// cuBLAS, loaded when the first GPU backend is made instead of when the program starts. Linking
// libcublas loads libcublasLt with it: about 215 MiB of resident memory in every troupe process
// (measured: 14 MiB for an empty process that loads libcudart, 229 MiB with libcublas), including
// the control process, agents without GPUs and every test. The few entry points the GPU engine
// calls are resolved here with dlsym instead.
#include <cublas_v2.h>

namespace troupe::devices::gpu {

struct cublas_library {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetWorkspace_v2) set_workspace = nullptr;
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  decltype(&cublasSgemv_v2) sgemv = nullptr;
};

// Loaded on the first call (thread-safe), kept for the process. Throws troupe::runtime_failure
// naming the library and the loader's reason when it cannot be loaded or lacks an entry point.
const cublas_library& cublas();

}  // namespace troupe::devices::gpu
