#pragma once
// The cuda backend as a device (devices/cuda/cuda_device.cpp; without CUDA in the build,
// cuda_none.cpp says so instead). Parameters and rows come from host memory each call and
// the gradient sum goes back to it, so every sync mode, slice and fault works unchanged.
#include <memory>

#include "devices/device.hpp"

namespace troupe::devices {

// Throws troupe::input_error naming the device when CUDA is not compiled in or the ordinal is
// not a visible GPU.
std::unique_ptr<device> make_cuda_device(const device_spec& spec);

}  // namespace troupe::devices
