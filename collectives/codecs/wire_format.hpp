#pragma once
// Little helpers to write and read codec payloads: a fixed header of 64-bit words, then arrays.
// Internal to codecs/.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/span.hpp"

namespace troupe::collectives::codec_wire {

class writer {
 public:
  template <class T>
  void put(const T& v) {
    const auto at = bytes.size();
    bytes.resize(at + sizeof(T));
    std::memcpy(bytes.data() + at, &v, sizeof(T));
  }
  template <class T>
  void put_array(const T* data, std::size_t n) {
    const auto at = bytes.size();
    bytes.resize(at + n * sizeof(T));
    if (n) std::memcpy(bytes.data() + at, data, n * sizeof(T));
  }
  std::vector<std::byte> bytes;
};

class reader {
 public:
  reader(span<const std::byte> b, const char* codec) : bytes_(b), codec_(codec) {}
  template <class T>
  T get() {
    T v;
    take(&v, sizeof(T));
    return v;
  }
  template <class T>
  void get_array(T* out, std::size_t n) {
    take(out, n * sizeof(T));
  }
  void expect_end() const {
    if (at_ != bytes_.size())
      throw input_error(std::string{codec_} + " codec: payload has trailing bytes");
  }

 private:
  void take(void* out, std::size_t n) {
    if (bytes_.size() - at_ < n)
      throw input_error(std::string{codec_} + " codec: payload truncated");
    if (n) std::memcpy(out, bytes_.data() + at_, n);
    at_ += n;
  }
  span<const std::byte> bytes_;
  const char* codec_;
  std::size_t at_ = 0;
};

// The count check every decoder does first.
inline void expect_count(std::uint64_t encoded, std::size_t out, const char* codec) {
  if (encoded != out)
    throw input_error(std::string{codec} + " codec: payload holds " + std::to_string(encoded) +
                      " values, the output has room for " + std::to_string(out));
}

}  // namespace troupe::collectives::codec_wire
