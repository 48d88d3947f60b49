#include "collectives/inproc/reduce_kernel.hpp"

#include <algorithm>
#include <cstdint>

#include "core/cpu_features.hpp"

#ifdef __SSE2__
#include <immintrin.h>
#endif

// x86-64 builds target the baseline (SSE2); the AVX2 kernel is compiled beside it and chosen at
// run time where the CPU has it (one 256-bit load per input and step: about 10% faster on two
// inputs here, memory-bound beyond that).
#if defined(__x86_64__) && defined(__GNUC__)
#define TROUPE_REDUCE_AVX2 1
#endif

namespace troupe::collectives {
namespace {

template <reduce_op Op>
inline float combine(float acc, float x) {
  if constexpr (Op == reduce_op::sum)
    return acc + x;
  else
    return x > acc ? x : acc;
}

template <reduce_op Op, bool Divide>
inline float reduce_one(const float* const* ins, std::size_t m, std::size_t at, float divisor) {
  float acc = ins[0][at];
  for (std::size_t k = 1; k < m; ++k) acc = combine<Op>(acc, ins[k][at]);
  if constexpr (Divide) acc /= divisor;
  return acc;
}

#ifdef __SSE2__
template <reduce_op Op>
inline __m128 combine(__m128 acc, __m128 x) {
  if constexpr (Op == reduce_op::sum)
    return _mm_add_ps(acc, x);
  else
    return _mm_max_ps(x, acc);  // x > acc ? x : acc, as the scalar form (NaN included)
}

template <bool Stream>
inline void put(float* p, __m128 v) {
  if constexpr (Stream)
    _mm_stream_ps(p, v);
  else
    _mm_store_ps(p, v);
}
#endif

template <reduce_op Op, bool Divide, bool Stream>
void kernel(float* out, const float* const* ins, std::size_t m, std::size_t lo, std::size_t n,
            float divisor) {
  std::size_t i = 0;
#ifdef __SSE2__
  while (i < n && reinterpret_cast<std::uintptr_t>(out + i) % 16 != 0) {
    out[i] = reduce_one<Op, Divide>(ins, m, lo + i, divisor);
    ++i;
  }
  const __m128 d = _mm_set1_ps(divisor);
  // Four independent vectors per step: the adds of one input overlap the loads of the next.
  for (; i + 16 <= n; i += 16) {
    const float* p = ins[0] + lo + i;
    __m128 a0 = _mm_loadu_ps(p), a1 = _mm_loadu_ps(p + 4), a2 = _mm_loadu_ps(p + 8),
           a3 = _mm_loadu_ps(p + 12);
    for (std::size_t k = 1; k < m; ++k) {
      const float* q = ins[k] + lo + i;
      a0 = combine<Op>(a0, _mm_loadu_ps(q));
      a1 = combine<Op>(a1, _mm_loadu_ps(q + 4));
      a2 = combine<Op>(a2, _mm_loadu_ps(q + 8));
      a3 = combine<Op>(a3, _mm_loadu_ps(q + 12));
    }
    if constexpr (Divide) {
      a0 = _mm_div_ps(a0, d);
      a1 = _mm_div_ps(a1, d);
      a2 = _mm_div_ps(a2, d);
      a3 = _mm_div_ps(a3, d);
    }
    put<Stream>(out + i, a0);
    put<Stream>(out + i + 4, a1);
    put<Stream>(out + i + 8, a2);
    put<Stream>(out + i + 12, a3);
  }
#endif
  for (; i < n; ++i) out[i] = reduce_one<Op, Divide>(ins, m, lo + i, divisor);
}

#ifdef TROUPE_REDUCE_AVX2
template <reduce_op Op>
__attribute__((target("avx2"), always_inline)) inline __m256 add(__m256 acc, __m256 x) {
  if constexpr (Op == reduce_op::sum)
    return _mm256_add_ps(acc, x);
  else
    return _mm256_max_ps(x, acc);  // x > acc ? x : acc
}

template <reduce_op Op, bool Divide, bool Stream>
__attribute__((target("avx2"))) void kernel_avx2(float* out, const float* const* ins, std::size_t m,
                                                 std::size_t lo, std::size_t n, float divisor) {
  std::size_t i = 0;
  while (i < n && reinterpret_cast<std::uintptr_t>(out + i) % 32 != 0) {
    out[i] = reduce_one<Op, Divide>(ins, m, lo + i, divisor);
    ++i;
  }
  const __m256 d = _mm256_set1_ps(divisor);
  for (; i + 32 <= n; i += 32) {
    const float* p = ins[0] + lo + i;
    __m256 a0 = _mm256_loadu_ps(p), a1 = _mm256_loadu_ps(p + 8), a2 = _mm256_loadu_ps(p + 16),
           a3 = _mm256_loadu_ps(p + 24);
    for (std::size_t k = 1; k < m; ++k) {
      const float* q = ins[k] + lo + i;
      a0 = add<Op>(a0, _mm256_loadu_ps(q));
      a1 = add<Op>(a1, _mm256_loadu_ps(q + 8));
      a2 = add<Op>(a2, _mm256_loadu_ps(q + 16));
      a3 = add<Op>(a3, _mm256_loadu_ps(q + 24));
    }
    if constexpr (Divide) {
      a0 = _mm256_div_ps(a0, d);
      a1 = _mm256_div_ps(a1, d);
      a2 = _mm256_div_ps(a2, d);
      a3 = _mm256_div_ps(a3, d);
    }
    if constexpr (Stream) {
      _mm256_stream_ps(out + i, a0);
      _mm256_stream_ps(out + i + 8, a1);
      _mm256_stream_ps(out + i + 16, a2);
      _mm256_stream_ps(out + i + 24, a3);
    } else {
      _mm256_store_ps(out + i, a0);
      _mm256_store_ps(out + i + 8, a1);
      _mm256_store_ps(out + i + 16, a2);
      _mm256_store_ps(out + i + 24, a3);
    }
  }
  for (; i < n; ++i) out[i] = reduce_one<Op, Divide>(ins, m, lo + i, divisor);
}

#endif

template <reduce_op Op, bool Divide>
void dispatch_stream(float* out, const float* const* ins, std::size_t m, std::size_t lo,
                     std::size_t n, const reduce_spec& s) {
#ifdef TROUPE_REDUCE_AVX2
  if (!s.portable && cpu_has_avx2()) {
    if (s.stream)
      kernel_avx2<Op, Divide, true>(out, ins, m, lo, n, s.divisor);
    else
      kernel_avx2<Op, Divide, false>(out, ins, m, lo, n, s.divisor);
    return;
  }
#endif
  if (s.stream)
    kernel<Op, Divide, true>(out, ins, m, lo, n, s.divisor);
  else
    kernel<Op, Divide, false>(out, ins, m, lo, n, s.divisor);
}

}  // namespace

void reduce_into(float* out, const float* const* ins, std::size_t m, std::size_t lo, std::size_t n,
                 const reduce_spec& spec) {
  if (m == 0) {
    std::fill(out, out + n, 0.0f);
    return;
  }
  if (spec.op == reduce_op::max)
    dispatch_stream<reduce_op::max, false>(out, ins, m, lo, n, spec);
  else if (spec.divide)
    dispatch_stream<reduce_op::sum, true>(out, ins, m, lo, n, spec);
  else
    dispatch_stream<reduce_op::sum, false>(out, ins, m, lo, n, spec);
}

double sq_norm(const float* v, std::size_t n) {
  constexpr std::size_t block = 512;
  double sum = 0.0;
  std::size_t i = 0;
  while (n - i >= 8) {
    const std::size_t end = i + std::min(block, (n - i) - (n - i) % 8);
    float acc[8] = {};
    for (; i < end; i += 8)
      for (std::size_t k = 0; k < 8; ++k) acc[k] += v[i + k] * v[i + k];
    for (float a : acc) sum += a;
  }
  for (; i < n; ++i) sum += static_cast<double>(v[i]) * v[i];
  return sum;
}

void reduce_publish() {
#ifdef __SSE2__
  _mm_sfence();
#endif
}

}  // namespace troupe::collectives
