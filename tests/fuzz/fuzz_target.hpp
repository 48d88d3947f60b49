#pragma once
// What every fuzz target in this folder defines (libFuzzer's entry point), and what the replay
// main (replay_main.cpp) calls in the default test suite. It returns 0 for every input, refused
// or not; a bug is a crash, an exception the target does not expect, a sanitizer report or a
// hang.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace troupe::fuzz {

// A property of the input's handling that does not hold: abort, so that libFuzzer keeps the
// input as a crash and the replay test fails, naming the property.
[[noreturn]] inline void broken(const char* what) {
  std::fprintf(stderr, "fuzz target: %s\n", what);
  std::abort();
}

// Runs f, which may turn its input down with a `Refusal`: that is the input's expected end, so
// it ends here; any other exception goes on to libFuzzer as a bug.
template <class Refusal, class F>
void refused_as(F f) {
  try {
    f();
  } catch (const Refusal&) {
  }
}

}  // namespace troupe::fuzz
