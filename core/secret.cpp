#include "core/secret.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <vector>

#include "core/error.hpp"
#include "core/file_text.hpp"

namespace troupe {
namespace {

std::mutex secrets_mu;
std::vector<std::string>& secrets() {
  static std::vector<std::string> list;
  return list;
}

}  // namespace

std::string random_hex(std::size_t bytes) {
  std::string raw(bytes, '\0');
  std::size_t got = 0;
  while (got < bytes) {
    const auto n = ::getrandom(raw.data() + got, bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw runtime_failure(std::string("getrandom: ") + std::strerror(errno));
    got += static_cast<std::size_t>(n);
  }
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes * 2);
  for (unsigned char c : raw) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

bool same_secret(const std::string& given, const std::string& expected) {
  if (expected.empty()) return false;
  unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (std::size_t i = 0; i < given.size(); ++i)
    diff |= static_cast<unsigned char>(given[i] ^ expected[i % expected.size()]);
  return diff == 0;
}

void write_private_file(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp-" + random_hex(4);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw runtime_failure("cannot write " + path + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < content.size()) {
    const auto n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      throw runtime_failure("cannot write " + path + ": " + why);
    }
    done += static_cast<std::size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw runtime_failure("cannot write " + path + ": " + why);
  }
}

std::string read_private_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw input_error(path + ": cannot read: " + std::strerror(errno));
  if (st.st_mode & (S_IRWXG | S_IRWXO)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%03o", static_cast<unsigned>(st.st_mode & 0777));
    throw input_error(path + ": group or others may read it (mode " + mode +
                      "); make it 0600 (chmod 600 " + path + ")");
  }
  return read_file_text(path);
}

void register_secret(const std::string& secret) {
  if (secret.size() < 8) return;
  std::lock_guard<std::mutex> lock(secrets_mu);
  for (const auto& s : secrets())
    if (s == secret) return;
  secrets().push_back(secret);
}

std::string redact(std::string text) {
  std::lock_guard<std::mutex> lock(secrets_mu);
  for (const auto& s : secrets())
    for (auto at = text.find(s); at != std::string::npos; at = text.find(s, at))
      text.replace(at, s.size(), "[redacted]");
  return text;
}

}  // namespace troupe
