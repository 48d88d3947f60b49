#pragma once
// A number at the start of a text, as std::stod reads it, without its exceptions: callers that
// take a unit after the number (10k) or want the whole text to be one name their own input in
// their own message.
#include <cstddef>
#include <stdexcept>
#include <string>

namespace troupe {

struct leading_number {
  double value = 0.0;
  std::size_t used = 0;  // characters read; 0: the text does not start with a number
};

inline leading_number read_leading_number(const std::string& text) {
  leading_number n;
  try {
    n.value = std::stod(text, &n.used);
  } catch (const std::logic_error&) {  // invalid_argument or out_of_range
    n = {};
  }
  return n;
}

}  // namespace troupe
