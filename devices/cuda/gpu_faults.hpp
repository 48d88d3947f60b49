#pragma once
// Real GPU failures on demand, for fault injection and its tests. Each throws the
// runtime_failure that the failure itself produces, with the CUDA error's text.
namespace troupe::devices::gpu {

// Asks for 1 GiB more device memory than is free: cudaErrorMemoryAllocation.
[[noreturn]] void provoke_out_of_memory(int ordinal);
// Runs a kernel that traps: cudaErrorLaunchFailure. The error is sticky: every later CUDA call of
// this process fails, as after a real device fault, so the device stays failed.
[[noreturn]] void provoke_device_error(int ordinal);

}  // namespace troupe::devices::gpu
