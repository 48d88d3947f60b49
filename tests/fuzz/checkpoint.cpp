// Fuzz target: the checkpoint reader (core/checkpoint.hpp), on the bytes of a checkpoint file as
// `--resume` and a restarted service find it on disk.
//
// Each input is read twice: as it is, and with its header's magic, version and size and its
// trailing checksum made right, since a fuzzer almost never guesses an fnv1a64 and the section
// parser behind it would otherwise go untested. A checkpoint that reads must also come out of
// the writer byte for byte as it went in (the format has one encoding of a set of sections),
// and its typed getters must refuse a section of the wrong size with troupe::runtime_failure.
//
// A bad file must end in troupe::runtime_failure; anything else is a bug.
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/checkpoint.hpp"
#include "core/error.hpp"
#include "core/hash.hpp"
#include "tests/fuzz/fuzz_target.hpp"

namespace {

using namespace troupe;

constexpr std::size_t header_bytes = 32;  // the layout in core/checkpoint.hpp
constexpr std::size_t checksum_bytes = 8;

void put_le(std::uint8_t* p, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// A file in memory that the writer can open by name: one per process, rewritten per input.
struct scratch_file {
  int fd;
  std::string path;
};

const scratch_file& scratch() {
  static const scratch_file file = [] {
    const int fd = ::memfd_create("troupe-fuzz-checkpoint", 0);
    if (fd < 0) troupe::fuzz::broken("memfd_create failed");
    return scratch_file{fd, "/proc/self/fd/" + std::to_string(fd)};
  }();
  return file;
}

void check_read(const std::vector<std::uint8_t>& bytes) {
  checkpoint c;
  try {
    c = parse_checkpoint(bytes.data(), bytes.size(), "fuzz.trp");
  } catch (const runtime_failure&) {
    return;
  }
  for (const auto& s : c.sections()) {
    fuzz::refused_as<runtime_failure>([&] { c.floats(s.name); });
    fuzz::refused_as<runtime_failure>([&] { c.u64(s.name); });
    c.string(s.name);
  }
  write_checkpoint_file(scratch().path, c);
  const checkpoint again = read_checkpoint_file(scratch().path);
  if (!(again == c)) troupe::fuzz::broken("a checkpoint read back differs from the one written");
  std::vector<std::uint8_t> written(bytes.size() + 1);
  const ssize_t n = ::pread(scratch().fd, written.data(), written.size(), 0);
  if (n != static_cast<ssize_t>(bytes.size()) ||
      std::memcmp(written.data(), bytes.data(), bytes.size()) != 0)
    troupe::fuzz::broken("the writer's bytes differ from the bytes the reader accepted");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::uint8_t> bytes(data, data + size);
  check_read(bytes);
  if (size < header_bytes + checksum_bytes) return 0;
  std::memcpy(bytes.data(), "TRPCKPT1", 8);
  put_le(&bytes[8], 1, 4);
  put_le(&bytes[24], size, 8);
  put_le(&bytes[size - checksum_bytes], fnv1a64(bytes.data(), size - checksum_bytes), 8);
  check_read(bytes);
  return 0;
}
