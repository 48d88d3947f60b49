// Without CUDA in the build: no GPUs. (With CUDA, devices/cuda/cuda_info.cu is compiled instead.)
#ifndef TROUPE_HAVE_CUDA
#include "devices/cuda_info.hpp"

namespace troupe::devices {

bool cuda_compiled() {
  return false;
}
int cuda_device_count() {
  return 0;
}

}  // namespace troupe::devices
#endif
