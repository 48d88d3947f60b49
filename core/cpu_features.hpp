#pragma once
// What the CPU can run, for code compiled twice (a baseline copy and an
// __attribute__((target("avx2"))) one) that picks its copy at run time: the reduce kernel, Adam's
// update, the CNN's convolution and pooling passes. One place asks, so every such choice agrees.
namespace troupe {

// Asked on first use, not in a static initializer, which may run before the CPU model is known.
inline bool cpu_has_avx2() {
#if defined(__x86_64__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2;
#else
  return false;
#endif
}

}  // namespace troupe
