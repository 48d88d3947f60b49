#include "core/checkpoint.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/hash.hpp"

namespace troupe {
namespace {

namespace fs = std::filesystem;

constexpr char magic[8] = {'T', 'R', 'P', 'C', 'K', 'P', 'T', '1'};
constexpr std::uint32_t format_version = 1;
// The start of the read error for another format version (load_newest_valid classifies by it).
constexpr const char* unsupported_version = "unsupported format version ";
constexpr std::size_t header_bytes = 32;
constexpr std::size_t checksum_bytes = 8;
constexpr const char* name_prefix = "ckpt-";
constexpr const char* name_suffix = ".trp";
// Temp files: "." + final name + ".tmp." + pid + "." + counter. The leading dot keeps them out of
// list(); pid and counter keep two writes from sharing one.
constexpr const char* temp_marker = ".tmp.";

std::string errno_text() {
  return std::strerror(errno);
}

void put_u32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
void put_u64(std::uint8_t* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
std::uint32_t get_u32(const std::uint8_t* p) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= std::uint32_t{p[i]} << (8 * i);
  return v;
}
std::uint64_t get_u64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t{p[i]} << (8 * i);
  return v;
}

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// Writes through a file descriptor, hashing every byte on the way.
class hashing_writer {
 public:
  hashing_writer(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}

  void write(const void* data, std::size_t n) {
    hash_ = fnv1a64(data, n, hash_);
    raw(data, n);
  }
  void raw(const void* data, std::size_t n) {
    const auto* p = static_cast<const char*>(data);
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        throw runtime_failure(path_ + ": write failed: " + errno_text());
      }
      p += w;
      n -= static_cast<std::size_t>(w);
    }
  }
  std::uint64_t hash() const { return hash_; }

 private:
  int fd_;
  std::string path_;
  std::uint64_t hash_ = fnv1a64_init;
};

struct fd_guard {
  int fd;
  ~fd_guard() {
    if (fd >= 0) ::close(fd);
  }
};

void fsync_or_throw(int fd, const std::string& what) {
  if (::fsync(fd) != 0) throw runtime_failure(what + ": fsync failed: " + errno_text());
}

// Parses "ckpt-<digits>.trp" into its step; anything else (temp files included) is not ours.
std::optional<std::int64_t> step_of_name(const std::string& name) {
  const std::size_t pre = std::strlen(name_prefix), suf = std::strlen(name_suffix);
  if (name.size() <= pre + suf || name.compare(0, pre, name_prefix) != 0 ||
      name.compare(name.size() - suf, suf, name_suffix) != 0)
    return std::nullopt;
  const std::string digits = name.substr(pre, name.size() - pre - suf);
  if (digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoll(digits);
}

bool is_temp_name(const std::string& name) {
  const std::size_t marker = name.find(temp_marker);
  return !name.empty() && name[0] == '.' && marker != std::string::npos &&
         step_of_name(name.substr(1, marker - 1)).has_value();
}

}  // namespace

// ---- checkpoint -----------------------------------------------------------------------------

const std::vector<std::uint8_t>* checkpoint::find(const std::string& name) const {
  for (const auto& s : sections_)
    if (s.name == name) return &s.bytes;
  return nullptr;
}

void checkpoint::set_bytes(const std::string& name, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  std::vector<std::uint8_t> v(p, p + bytes);
  for (auto& s : sections_)
    if (s.name == name) {
      s.bytes = std::move(v);
      return;
    }
  sections_.push_back({name, std::move(v)});
}

void checkpoint::set_floats(const std::string& name, const float* data, std::size_t count) {
  std::vector<std::uint8_t> v(count * 4);
  for (std::size_t i = 0; i < count; ++i) {
    std::uint32_t u;
    std::memcpy(&u, &data[i], 4);
    put_u32(&v[4 * i], u);
  }
  set_bytes(name, v.data(), v.size());
}

void checkpoint::set_u64s(const std::string& name, const std::vector<std::uint64_t>& values) {
  std::vector<std::uint8_t> v(values.size() * 8);
  for (std::size_t i = 0; i < values.size(); ++i) put_u64(&v[8 * i], values[i]);
  set_bytes(name, v.data(), v.size());
}

void checkpoint::fail(const std::string& name, const std::string& what) const {
  throw runtime_failure((source.empty() ? std::string("checkpoint") : source) + ": section '" +
                        name + "': " + what);
}

const std::vector<std::uint8_t>& checkpoint::bytes(const std::string& name) const {
  const auto* b = find(name);
  if (!b) fail(name, "missing");
  return *b;
}

std::vector<float> checkpoint::floats(const std::string& name) const {
  const auto& b = bytes(name);
  if (b.size() % 4 != 0)
    fail(name, std::to_string(b.size()) + " bytes is not a whole number of float32");
  std::vector<float> out(b.size() / 4);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::uint32_t u = get_u32(&b[4 * i]);
    std::memcpy(&out[i], &u, 4);
  }
  return out;
}

std::vector<std::uint64_t> checkpoint::u64s(const std::string& name) const {
  const auto& b = bytes(name);
  if (b.size() % 8 != 0)
    fail(name, std::to_string(b.size()) + " bytes is not a whole number of u64");
  std::vector<std::uint64_t> out(b.size() / 8);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = get_u64(&b[8 * i]);
  return out;
}

std::uint64_t checkpoint::u64(const std::string& name) const {
  const auto v = u64s(name);
  if (v.size() != 1) fail(name, "expected one u64, found " + std::to_string(v.size()));
  return v[0];
}

std::string checkpoint::string(const std::string& name) const {
  const auto& b = bytes(name);
  return std::string(b.begin(), b.end());
}

bool checkpoint::operator==(const checkpoint& o) const {
  if (step != o.step || sections_.size() != o.sections_.size()) return false;
  for (std::size_t i = 0; i < sections_.size(); ++i)
    if (sections_[i].name != o.sections_[i].name || sections_[i].bytes != o.sections_[i].bytes)
      return false;
  return true;
}

// ---- one file -------------------------------------------------------------------------------

void write_checkpoint_file(const std::string& path, const checkpoint& c) {
  std::set<std::string> names;
  std::uint64_t total = header_bytes + checksum_bytes;
  for (const auto& s : c.sections()) {
    if (!names.insert(s.name).second)
      throw runtime_failure(path + ": duplicate section name '" + s.name + "'");
    total += 4 + s.name.size() + 8 + s.bytes.size();
  }

  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw runtime_failure(path + ": cannot create: " + errno_text());
  fd_guard guard{fd};
  hashing_writer w(fd, path);

  std::uint8_t header[header_bytes];
  std::memcpy(header, magic, 8);
  put_u32(header + 8, format_version);
  put_u32(header + 12, static_cast<std::uint32_t>(c.sections().size()));
  put_u64(header + 16, static_cast<std::uint64_t>(c.step));
  put_u64(header + 24, total);
  w.write(header, sizeof header);
  for (const auto& s : c.sections()) {
    std::uint8_t len[8];
    put_u32(len, static_cast<std::uint32_t>(s.name.size()));
    w.write(len, 4);
    w.write(s.name.data(), s.name.size());
    put_u64(len, s.bytes.size());
    w.write(len, 8);
    w.write(s.bytes.data(), s.bytes.size());
  }
  std::uint8_t sum[8];
  put_u64(sum, w.hash());
  w.raw(sum, 8);
  fsync_or_throw(fd, path);
  guard.fd = -1;
  if (::close(fd) != 0) throw runtime_failure(path + ": close failed: " + errno_text());
}

checkpoint read_checkpoint_file(const std::string& path) {
  const auto fail = [&](const std::string& what) -> void {
    throw runtime_failure(path + ": " + what);
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open: " + errno_text());
  fd_guard guard{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail("cannot stat: " + errno_text());
  std::vector<std::uint8_t> buf(static_cast<std::size_t>(st.st_size));
  std::size_t got = 0;
  while (got < buf.size()) {
    const ssize_t r = ::read(fd, buf.data() + got, buf.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) fail("read failed: " + errno_text());
    if (r == 0) break;  // the file shrank under us: validated below as truncation
    got += static_cast<std::size_t>(r);
  }
  buf.resize(got);
  return parse_checkpoint(buf.data(), buf.size(), path);
}

checkpoint parse_checkpoint(const std::uint8_t* data, std::size_t size, const std::string& source) {
  const auto fail = [&](const std::string& what) -> void {
    throw runtime_failure(source + ": " + what);
  };
  if (size < header_bytes)
    fail("too short for a checkpoint header (" + std::to_string(size) + " of " +
         std::to_string(header_bytes) + " bytes)");
  if (std::memcmp(data, magic, 8) != 0) fail("bad magic (not a Troupe checkpoint)");
  const std::uint32_t version = get_u32(&data[8]);
  if (version != format_version)
    fail(unsupported_version + std::to_string(version) + " (this build reads " +
         std::to_string(format_version) + ")");
  const std::uint32_t count = get_u32(&data[12]);
  const std::uint64_t total = get_u64(&data[24]);
  if (size < total)
    fail("truncated: " + std::to_string(size) + " of " + std::to_string(total) + " bytes");
  if (size > total)
    fail(std::to_string(size - total) + " trailing bytes after the " + std::to_string(total) +
         " the header declares");
  if (total < header_bytes + checksum_bytes)
    fail("declared size " + std::to_string(total) + " is too small");
  // The checksum before the sections: a damaged length field must read as damage, not as a
  // confusing "section runs past the end".
  const std::size_t body = total - checksum_bytes;
  const std::uint64_t stored = get_u64(&data[body]);
  const std::uint64_t computed = fnv1a64(data, body);
  if (stored != computed)
    fail("checksum mismatch (stored " + hex(stored) + ", computed " + hex(computed) + ")");

  checkpoint c;
  c.source = source;
  c.step = static_cast<std::int64_t>(get_u64(&data[16]));
  std::size_t at = header_bytes;
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto need = [&](std::uint64_t n, const char* what) {
      if (n > body - at)
        fail("section " + std::to_string(i) + ": " + what + " runs past the end of the sections");
    };
    need(4, "name length");
    const std::uint32_t name_len = get_u32(&data[at]);
    at += 4;
    need(name_len, "name");
    std::string name(reinterpret_cast<const char*>(&data[at]), name_len);
    at += name_len;
    need(8, "data length");
    const std::uint64_t len = get_u64(&data[at]);
    at += 8;
    need(len, "data");
    if (c.has(name)) fail("duplicate section name '" + name + "'");
    c.set_bytes(name, &data[at], static_cast<std::size_t>(len));
    at += static_cast<std::size_t>(len);
  }
  if (at != body)
    fail(std::to_string(body - at) + " unaccounted bytes after " + std::to_string(count) +
         " sections");
  return c;
}

// ---- the store ------------------------------------------------------------------------------

checkpoint_store::checkpoint_store(std::string dir, std::size_t keep_last)
    : dir_(std::move(dir)), keep_last_(keep_last) {
  if (dir_.empty()) throw input_error("checkpoint directory: empty path");
}

std::string checkpoint_store::path_for(std::int64_t step) const {
  if (step < 0) throw runtime_failure(dir_ + ": negative checkpoint step " + std::to_string(step));
  char name[40];
  std::snprintf(name, sizeof name, "%s%09lld%s", name_prefix, static_cast<long long>(step),
                name_suffix);
  return (fs::path(dir_) / name).string();
}

std::string checkpoint_store::write(const checkpoint& c) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw runtime_failure(dir_ + ": cannot create checkpoint directory: " + ec.message());

  const std::string final_path = path_for(c.step);
  static std::atomic<std::uint64_t> counter{0};
  const std::string temp_path =
      (fs::path(dir_) / ("." + fs::path(final_path).filename().string() + temp_marker +
                         std::to_string(::getpid()) + "." + std::to_string(counter++)))
          .string();
  try {
    write_checkpoint_file(temp_path, c);
  } catch (...) {
    ::unlink(temp_path.c_str());
    throw;
  }
  if (::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(temp_path.c_str());
    throw runtime_failure(final_path + ": rename from " + temp_path + " failed: " + why);
  }
  // The rename is durable only once the directory entry is on disk.
  const int dfd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) throw runtime_failure(dir_ + ": cannot open directory to fsync: " + errno_text());
  fd_guard guard{dfd};
  fsync_or_throw(dfd, dir_);
  prune();
  return final_path;
}

std::vector<checkpoint_store::entry> checkpoint_store::list() const {
  std::vector<entry> out;
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) return out;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    if (const auto step = step_of_name(it->path().filename().string()))
      out.push_back({*step, it->path().string()});
  }
  if (ec) throw runtime_failure(dir_ + ": cannot list checkpoint directory: " + ec.message());
  std::sort(out.begin(), out.end(), [](const entry& a, const entry& b) { return a.step < b.step; });
  return out;
}

load_result checkpoint_store::load_newest_valid() const {
  load_result r;
  const auto files = list();
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    try {
      checkpoint c = read_checkpoint_file(it->path);
      if (c.step != it->step)
        throw runtime_failure(it->path + ": header says step " + std::to_string(c.step) +
                              " but the file name says " + std::to_string(it->step));
      r.loaded = std::move(c);
      break;
    } catch (const runtime_failure& e) {
      // The message already starts with the path; keep only the reason.
      std::string why = e.what();
      if (why.rfind(it->path + ": ", 0) == 0) why = why.substr(it->path.size() + 2);
      r.skipped.push_back({it->path, why, why.rfind(unsupported_version, 0) == 0});
    }
  }
  std::ostringstream s;
  if (r.loaded)
    s << "resuming from " << r.loaded->source << " (step " << r.loaded->step << ")";
  else if (files.empty())
    s << "no checkpoint in " << dir_;
  else
    s << "no valid checkpoint in " << dir_ << " (" << files.size() << " file"
      << (files.size() == 1 ? "" : "s") << " tried)";
  for (const auto& k : r.skipped) s << "; skipped " << k.path << ": " << k.reason;
  r.summary = s.str();
  return r;
}

void checkpoint_store::prune() const {
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) return;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec))
    if (is_temp_name(it->path().filename().string())) fs::remove(it->path(), ec);
  if (keep_last_ == 0) return;
  const auto files = list();
  for (std::size_t i = 0; i + keep_last_ < files.size(); ++i) {
    if (!fs::remove(files[i].path, ec) && ec)
      throw runtime_failure(files[i].path + ": cannot delete old checkpoint: " + ec.message());
  }
}

}  // namespace troupe
