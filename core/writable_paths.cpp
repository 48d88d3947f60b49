#include "core/writable_paths.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/error.hpp"

namespace troupe {
namespace {

void make_dirs(const std::filesystem::path& dir, const std::string& what,
               const std::string& shown) {
  if (dir.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw input_error(what + " " + shown + ": cannot make " + dir.string() + ": " + ec.message());
  if (!std::filesystem::is_directory(dir, ec))
    throw input_error(what + " " + shown + ": " + dir.string() + " is not a directory");
}

}  // namespace

void require_writable_dir(const std::string& dir, const std::string& what) {
  make_dirs(dir, what, dir);
  // mkstemp replaces the six X's of the template with a unique suffix.
  std::string name = (std::filesystem::path(dir) / ".troupe-write-check-XXXXXX").string();
  std::vector<char> buf(name.begin(), name.end());
  buf.push_back('\0');
  const int fd = ::mkstemp(buf.data());
  if (fd < 0) throw input_error(what + " " + dir + ": cannot write there: " + std::strerror(errno));
  ::close(fd);
  ::unlink(buf.data());
}

void require_writable_file(const std::string& file, const std::string& what) {
  const std::filesystem::path p(file);
  make_dirs(p.parent_path(), what, file);
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec))
    throw input_error(what + " " + file + ": is a directory");
  const bool existed = std::filesystem::exists(p, ec);
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    throw input_error(what + " " + file + ": cannot write there: " + std::strerror(errno));
  ::close(fd);
  if (!existed) ::unlink(file.c_str());
}

}  // namespace troupe
