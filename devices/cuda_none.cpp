// What a build without CUDA says (with CUDA, devices/cuda/ is compiled instead): no GPUs, and a
// cuda device is refused naming the build.
#ifndef TROUPE_HAVE_CUDA
#include "core/error.hpp"
#include "devices/cuda_device.hpp"
#include "devices/cuda_info.hpp"

namespace troupe::devices {

bool cuda_compiled() {
  return false;
}
int cuda_device_count() {
  return 0;
}

std::unique_ptr<device> make_cuda_device(const device_spec& spec) {
  throw input_error("device '" + spec.name +
                    "': this build has no CUDA (nvcc was not found when it was configured); use "
                    "cpu or sim");
}

}  // namespace troupe::devices
#endif
