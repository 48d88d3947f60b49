#include <cuda_runtime.h>

#include "devices/cuda_info.hpp"

namespace troupe::devices {

bool cuda_compiled() {
  return true;
}

int cuda_device_count() {
  int n = 0;
  // No driver or no GPU is an ordinary answer here, not an error: report zero devices.
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

}  // namespace troupe::devices
