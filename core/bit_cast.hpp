#pragma once
// C++20's std::bit_cast for this C++17 code base: the bits of one trivially copyable value as
// another type of the same size (a float's IEEE bits, a double stored in a u64 field), through
// memcpy, which is defined behaviour where a pointer cast or a union is not.
#include <cstring>
#include <type_traits>

namespace troupe {

template <class To, class From>
To bit_cast(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast needs types of the same size");
  static_assert(std::is_trivially_copyable_v<To> && std::is_trivially_copyable_v<From>,
                "bit_cast needs trivially copyable types");
  To to;
  std::memcpy(&to, &from, sizeof to);
  return to;
}

}  // namespace troupe
