// fp16 and bf16: each value rounded to nearest-even in 16 bits.
#include <cmath>
#include <cstring>

#include "collectives/codecs/codec.hpp"
#include "collectives/codecs/wire_format.hpp"
#include "core/bit_cast.hpp"

namespace troupe::collectives {
namespace {

std::uint32_t bits_of(float f) {
  return bit_cast<std::uint32_t>(f);
}
float float_of(std::uint32_t u) {
  return bit_cast<float>(u);
}

// Round-to-nearest-even float -> half (after F. Giesen's float_to_half_fast3_rtne): values at or
// beyond 65520 become infinity, NaN stays NaN, small values become subnormals.
std::uint16_t to_half(float f) {
  const std::uint32_t f32_infinity = 255u << 23, f16_overflow = (127u + 16u) << 23;
  const std::uint32_t denormal_magic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
  std::uint32_t x = bits_of(f);
  const std::uint32_t sign = x & 0x80000000u;
  x ^= sign;
  std::uint16_t out;
  if (x >= f16_overflow) {
    out = x > f32_infinity ? 0x7e00 : 0x7c00;
  } else if (x < (113u << 23)) {
    // Subnormal half: let the FPU round by adding a magic number that aligns the bits.
    out = static_cast<std::uint16_t>(bits_of(float_of(x) + float_of(denormal_magic)) -
                                     denormal_magic);
  } else {
    const std::uint32_t mantissa_odd = (x >> 13) & 1u;
    x += ((15u - 127u) << 23) + 0xfffu;
    x += mantissa_odd;
    out = static_cast<std::uint16_t>(x >> 13);
  }
  return static_cast<std::uint16_t>(out | (sign >> 16));
}

float from_half(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return float_of(sign | 0x7f800000u | (mantissa << 13));
  return float_of(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

std::uint16_t to_bf16(float f) {
  const std::uint32_t x = bits_of(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // NaN
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

float from_bf16(std::uint16_t b) {
  return float_of(static_cast<std::uint32_t>(b) << 16);
}

template <std::uint16_t (*Encode)(float), float (*Decode)(std::uint16_t)>
class sixteen_bit_codec final : public codec {
 public:
  explicit sixteen_bit_codec(const char* name) : name_(name) {}
  std::string name() const override { return name_; }

  std::vector<std::byte> encode(span<const float> values, codec_state&) const override {
    codec_wire::writer w;
    w.put<std::uint64_t>(values.size());
    w.put<std::uint64_t>(0);  // reserved: keeps the 16-bit array 8-byte aligned
    std::vector<std::uint16_t> packed(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) packed[i] = Encode(values[i]);
    w.put_array(packed.data(), packed.size());
    return std::move(w.bytes);
  }

  void decode(span<const std::byte> bytes, span<float> out) const override {
    codec_wire::reader r{bytes, name_};
    codec_wire::expect_count(r.get<std::uint64_t>(), out.size(), name_);
    (void)r.get<std::uint64_t>();
    std::vector<std::uint16_t> packed(out.size());
    r.get_array(packed.data(), packed.size());
    r.expect_end();
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = Decode(packed[i]);
  }

 private:
  const char* name_;
};

}  // namespace

std::unique_ptr<codec> make_fp16_codec() {
  return std::make_unique<sixteen_bit_codec<to_half, from_half>>("fp16");
}
std::unique_ptr<codec> make_bf16_codec() {
  return std::make_unique<sixteen_bit_codec<to_bf16, from_bf16>>("bf16");
}

}  // namespace troupe::collectives
