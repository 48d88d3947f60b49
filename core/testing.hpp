#pragma once
// Test support shared by the unit and integration tests of every folder (not installed): a
// temporary directory that removes itself, a byte flipper for corruption tests, and the
// message of an expected input_error.
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "core/error.hpp"

namespace troupe::testing {

// A fresh directory under the system temp dir, PREFIX-PID-N, removed with its contents when the
// object goes out of scope (a test that fails still cleans up).
class temp_dir {
 public:
  explicit temp_dir(const std::string& prefix = "troupe-test") {
    static std::atomic<int> counter{0};
    path = std::filesystem::temp_directory_path() /
           (prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  std::string str() const { return path.string(); }
  std::string operator/(const std::string& name) const { return (path / name).string(); }

  std::filesystem::path path;
};

// XORs the byte at `offset` of file `p` with 0x5a: a corruption a checksum must catch.
inline void flip_byte(const std::filesystem::path& p, std::uintmax_t offset) {
  std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.read(&c, 1);
  c = static_cast<char>(c ^ 0x5a);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&c, 1);
}

// The message of the troupe::input_error that `f` throws, or "(no input_error)".
template <class F>
std::string input_error_of(F&& f) {
  try {
    f();
  } catch (const troupe::input_error& e) {
    return e.what();
  }
  return "(no input_error)";
}

}  // namespace troupe::testing
