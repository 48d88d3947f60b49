#include "collectives/inproc/reduce_kernel.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace troupe::collectives;

namespace {

// The scalar loops the kernel must match bit for bit (those of the parameter-server shard).
std::vector<float> reference(const std::vector<std::vector<float>>& ins, std::size_t lo,
                             std::size_t n, const reduce_spec& s) {
  std::vector<float> out(n, 0.0f);
  if (ins.empty()) return out;
  for (std::size_t i = 0; i < n; ++i) {
    float acc = ins[0][lo + i];
    for (std::size_t k = 1; k < ins.size(); ++k) {
      const float x = ins[k][lo + i];
      acc = s.op == reduce_op::sum ? acc + x : (x > acc ? x : acc);
    }
    if (s.op == reduce_op::sum && s.divide) acc /= s.divisor;
    out[i] = acc;
  }
  return out;
}

bool same_bits(float a, float b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

}  // namespace

TEST_CASE("reduce_into matches the scalar loops bit for bit") {
  std::mt19937 rng{7};
  // Wide exponents, so rounding differs with the order of the additions.
  std::uniform_real_distribution<float> mantissa{-1.0f, 1.0f};
  std::uniform_int_distribution<int> exponent{-20, 20};
  const std::size_t len = 1000;
  long long checked = 0;
  for (std::size_t m = 0; m <= 8; ++m) {
    std::vector<std::vector<float>> ins(m, std::vector<float>(len));
    for (auto& v : ins)
      for (auto& x : v) x = std::ldexp(mantissa(rng), exponent(rng));
    if (m >= 2) ins[1][5] = std::numeric_limits<float>::quiet_NaN();
    std::vector<const float*> ptrs;
    for (const auto& v : ins) ptrs.push_back(v.data());
    for (int variant = 0; variant < 6; ++variant)
      for (bool stream : {false, true})
        // Offsets and lengths around the 16-float step and the alignment of out and the inputs.
        for (std::size_t lo : {0ul, 1ul, 3ul, 17ul})
          for (std::size_t n : {0ul, 1ul, 5ul, 16ul, 31ul, 33ul, 64ul, 977ul}) {
            reduce_spec s;
            s.op = variant % 3 == 2 ? reduce_op::max : reduce_op::sum;
            s.divide = variant % 3 == 1;
            s.portable = variant >= 3;
            s.divisor = 3.7f;
            s.stream = stream;
            const auto want = reference(ins, lo, n, s);
            // out misaligned by 1 float from a 64-byte boundary when lo is odd.
            std::vector<float> buffer(n + 32, -1.0f);
            float* out = buffer.data() + (lo % 2);
            reduce_into(out, ptrs.data(), m, lo, n, s);
            reduce_publish();
            std::size_t wrong = 0;
            for (std::size_t i = 0; i < n; ++i) wrong += !same_bits(out[i], want[i]);
            // Nothing past the end is written.
            for (std::size_t i = n; i < n + 16; ++i) wrong += out[i] != -1.0f;
            CAPTURE(m);
            CAPTURE(variant);
            CAPTURE(lo);
            CAPTURE(n);
            CHECK(wrong == 0);
            checked += static_cast<long long>(n);
          }
  }
  CHECK(checked > 200000);
}
