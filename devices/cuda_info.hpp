#pragma once
// What this build and machine know about CUDA. Compiled from devices/cuda/*.cu when nvcc was
// found at configure time, from devices/cuda_none.cpp otherwise.

namespace troupe::devices {

bool cuda_compiled();
// Visible CUDA devices; 0 when there is no driver, no GPU, or no CUDA in this build.
int cuda_device_count();

}  // namespace troupe::devices
