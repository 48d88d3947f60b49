#pragma once
// Real GPU failures on demand, for fault injection and its tests. Each throws the
// runtime_failure that the failure itself produces, with the CUDA error's text.
namespace troupe::devices::gpu {

// Asks for 1 GiB more device memory than is free: cudaErrorMemoryAllocation.
[[noreturn]] void provoke_out_of_memory(int ordinal);
// Launches a kernel with more threads a block than any GPU allows: cudaErrorInvalidConfiguration,
// reported at once by the runtime. Not sticky: the GPU stays usable for the rest of the process.
// A trapping kernel was tried first; its error is sticky (every later CUDA call of the process
// fails), and on an H100 the job did not record it as a device-error.
[[noreturn]] void provoke_device_error(int ordinal);

}  // namespace troupe::devices::gpu
