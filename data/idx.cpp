#include "data/idx.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>

#include "core/error.hpp"
#include "core/idx_files.hpp"

namespace troupe::data {
namespace {

constexpr std::uint32_t images_magic = 0x00000803;
constexpr std::uint32_t labels_magic = 0x00000801;

struct gz_closer {
  void operator()(gzFile f) const { gzclose(f); }
};
using gz_ptr = std::unique_ptr<gzFile_s, gz_closer>;

// The whole (decompressed) file in memory: one large gzread loop is far faster than per-record
// reads, which is what keeps 60k images under a second.
std::vector<std::uint8_t> slurp(const std::string& path) {
  errno = 0;
  gz_ptr f{gzopen(path.c_str(), "rb")};
  if (!f) {
    throw input_error("cannot open IDX file " + path + ": " +
                      (errno ? std::strerror(errno) : "out of memory"));
  }
  gzbuffer(f.get(), 1u << 20);
  constexpr std::size_t chunk = 8u << 20;
  std::vector<std::uint8_t> out;
  for (;;) {
    const std::size_t at = out.size();
    out.resize(at + chunk);
    const int got = gzread(f.get(), out.data() + at, static_cast<unsigned>(chunk));
    if (got < 0) {
      int code = 0;
      const char* msg = gzerror(f.get(), &code);
      throw input_error("IDX file " + path + " is corrupt or truncated: " + msg);
    }
    out.resize(at + static_cast<std::size_t>(got));
    if (got == 0) break;
  }
  // gzread reports a gzip stream cut short (Z_BUF_ERROR) only through gzerror.
  int code = Z_OK;
  const char* msg = gzerror(f.get(), &code);
  if (code != Z_OK) throw input_error("IDX file " + path + " is corrupt or truncated: " + msg);
  return out;
}

std::uint32_t be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

struct idx_body {
  std::vector<std::uint8_t> bytes;
  std::vector<std::size_t> dims;
  std::size_t offset = 0;  // where the data starts in bytes
};

idx_body parse(const std::string& path, std::uint32_t want_magic, std::size_t want_dims) {
  idx_body b;
  b.bytes = slurp(path);
  const std::size_t header = 4 + 4 * want_dims;
  if (b.bytes.size() < 4) {
    throw input_error("IDX file " + path + " is truncated: " + std::to_string(b.bytes.size()) +
                      " bytes, too short for a header");
  }
  const std::uint32_t magic = be32(b.bytes.data());
  if (magic != want_magic) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "wrong magic number 0x%08x (expected 0x%08x)", magic,
                  want_magic);
    throw input_error("IDX file " + path + ": " + buf);
  }
  if (b.bytes.size() < header) {
    throw input_error("IDX file " + path + " is truncated inside its header");
  }
  std::size_t total = 1;
  bool overflow = false;
  for (std::size_t i = 0; i < want_dims; ++i) {
    b.dims.push_back(be32(b.bytes.data() + 4 + 4 * i));
    if (b.dims.back() != 0 && total > SIZE_MAX / b.dims.back()) overflow = true;
    total *= b.dims.back();
  }
  b.offset = header;
  const std::size_t have = b.bytes.size() - header;
  if (overflow) throw input_error("IDX file " + path + " has impossible dimensions in its header");
  if (have < total) {
    throw input_error("IDX file " + path + " is truncated: header promises " +
                      std::to_string(total) + " data bytes, file holds " + std::to_string(have));
  }
  if (have > total) {
    throw input_error("IDX file " + path + " has " + std::to_string(have - total) +
                      " trailing bytes after the data its header describes");
  }
  return b;
}

void write_all(const std::string& path, const std::vector<std::uint8_t>& bytes, bool gzip) {
  errno = 0;
  gz_ptr f{gzopen(path.c_str(), gzip ? "wb6" : "wbT")};
  if (!f) throw input_error("cannot create IDX file " + path + ": " + std::strerror(errno));
  std::size_t at = 0;
  while (at < bytes.size()) {
    const auto n = static_cast<unsigned>(std::min<std::size_t>(bytes.size() - at, 1u << 24));
    if (gzwrite(f.get(), bytes.data() + at, n) != static_cast<int>(n)) {
      throw input_error("cannot write IDX file " + path);
    }
    at += n;
  }
  if (gzclose(f.release()) != Z_OK) throw input_error("cannot finish IDX file " + path);
}

void put_be32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<std::uint8_t>(v >> s));
}

}  // namespace

dataset read_idx_images(const std::string& path) {
  const idx_body b = parse(path, images_magic, 3);
  dataset d;
  d.name = path;
  d.n = b.dims[0];
  d.sample_shape = {1, b.dims[1], b.dims[2]};
  d.x.resize(d.n * b.dims[1] * b.dims[2]);
  const std::uint8_t* src = b.bytes.data() + b.offset;
  for (std::size_t i = 0; i < d.x.size(); ++i) d.x[i] = static_cast<float>(src[i]) * (1.0f / 255);
  return d;
}

std::vector<std::int32_t> read_idx_labels(const std::string& path) {
  const idx_body b = parse(path, labels_magic, 1);
  return {b.bytes.begin() + static_cast<std::ptrdiff_t>(b.offset), b.bytes.end()};
}

dataset load_idx_pair(const std::string& images_path, const std::string& labels_path,
                      const std::string& name) {
  dataset d = read_idx_images(images_path);
  d.labels = read_idx_labels(labels_path);
  if (d.labels.size() != d.n) {
    throw input_error("IDX count mismatch: " + images_path + " holds " + std::to_string(d.n) +
                      " images but " + labels_path + " holds " + std::to_string(d.labels.size()) +
                      " labels");
  }
  if (d.n == 0) throw input_error("IDX file " + images_path + " holds no images");
  d.name = name;
  d.classes = static_cast<std::size_t>(*std::max_element(d.labels.begin(), d.labels.end())) + 1;
  return d;
}

std::string idx_file_in(const std::string& dir, const std::string& name) {
  const std::string found = find_idx_file(dir, name);
  return found.empty() ? (dir.empty() || dir.back() == '/' ? dir : dir + "/") + name + ".gz"
                       : found;
}

train_test load_fashion_mnist(const std::string& dir) {
  train_test tt;
  tt.train = load_idx_pair(idx_file_in(dir, "train-images-idx3-ubyte"),
                           idx_file_in(dir, "train-labels-idx1-ubyte"), "fashion-mnist-train");
  tt.test = load_idx_pair(idx_file_in(dir, "t10k-images-idx3-ubyte"),
                          idx_file_in(dir, "t10k-labels-idx1-ubyte"), "fashion-mnist-test");
  // The test split must agree with train on the number of classes even if it lacks one.
  tt.test.classes = tt.train.classes = std::max(tt.train.classes, tt.test.classes);
  return tt;
}

void write_idx_images(const std::string& path, std::size_t n, std::size_t rows, std::size_t cols,
                      const std::vector<std::uint8_t>& pixels, bool gzip) {
  if (pixels.size() != n * rows * cols) {
    throw input_error("write_idx_images " + path + ": pixel count does not match n*rows*cols");
  }
  std::vector<std::uint8_t> out;
  out.reserve(16 + pixels.size());
  put_be32(out, images_magic);
  put_be32(out, static_cast<std::uint32_t>(n));
  put_be32(out, static_cast<std::uint32_t>(rows));
  put_be32(out, static_cast<std::uint32_t>(cols));
  out.insert(out.end(), pixels.begin(), pixels.end());
  write_all(path, out, gzip);
}

void write_idx_labels(const std::string& path, const std::vector<std::uint8_t>& labels, bool gzip) {
  std::vector<std::uint8_t> out;
  out.reserve(8 + labels.size());
  put_be32(out, labels_magic);
  put_be32(out, static_cast<std::uint32_t>(labels.size()));
  out.insert(out.end(), labels.begin(), labels.end());
  write_all(path, out, gzip);
}

}  // namespace troupe::data
