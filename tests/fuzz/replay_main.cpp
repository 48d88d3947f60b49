// Runs a fuzz target over saved inputs, without libFuzzer: the `fuzz_replay_<target>` tests of
// the default suite (cmake/fuzz.cmake), built with the normal compiler. Each argument is a file
// or a directory, read recursively in name order; every input must pass (a crash or an
// unexpected exception ends the process, and ctest reports the input named just before).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_target.hpp"

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> inputs_under(const fs::path& root) {
  std::vector<fs::path> out;
  if (fs::is_regular_file(root)) return {root};
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file()) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " FILE_OR_DIR...\n";
    return 2;
  }
  std::size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    const fs::path root = argv[i];
    if (!fs::exists(root)) {
      std::cerr << root.string() << ": no such file or directory\n";
      return 2;
    }
    for (const auto& path : inputs_under(root)) {
      std::ifstream in(path, std::ios::binary);
      const std::vector<char> bytes{std::istreambuf_iterator<char>(in), {}};
      if (!in.good() && !in.eof()) {
        std::cerr << path.string() << ": cannot read\n";
        return 2;
      }
      std::cout << path.string() << " (" << bytes.size() << " bytes)" << std::endl;
      LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
      ++count;
    }
  }
  std::cout << count << " inputs passed" << std::endl;
  return count > 0 ? 0 : 1;
}
