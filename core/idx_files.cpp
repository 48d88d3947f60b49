#include "core/idx_files.hpp"

#include <filesystem>
#include <system_error>

namespace troupe {

std::string find_idx_file(const std::string& dir, const std::string& name) {
  const std::string plain = (dir.empty() || dir.back() == '/' ? dir : dir + "/") + name;
  std::error_code ec;
  if (std::filesystem::is_regular_file(plain + ".gz", ec)) return plain + ".gz";
  if (std::filesystem::is_regular_file(plain, ec)) return plain;
  return {};
}

}  // namespace troupe
