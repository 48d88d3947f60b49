#pragma once
// Checkpoints: an atomic, self-checking file of named byte sections, and a directory store that
// resumes from the newest valid one.
//
// File layout (version 1; every integer little-endian, whatever the host):
//
//   offset  size  field
//   0       8     magic "TRPCKPT1"
//   8       4     u32 format version (1)
//   12      4     u32 section count S
//   16      8     i64 step
//   24      8     u64 total file size in bytes, checksum included
//   32      ...   S sections, each: u32 name length N, N name bytes, u64 data length L, L bytes
//   size-8  8     u64 fnv1a64 of every byte before it
//
// Why these choices:
// - The total size in the header turns a torn file into a precise message ("truncated: 1000 of
//   4096 bytes") before the checksum is even computed, and catches bytes appended after a
//   complete file.
// - fnv1a64 (core/hash.hpp) needs no zlib in core. Each FNV-1a round (xor a byte, multiply by an
//   odd prime) is a bijection of the 64-bit state, so any single changed byte always changes the
//   final value; wider damage is missed with probability about 2^-64.
// - Writing is atomic: a temp file in the same directory, fsync, rename over the final name,
//   fsync the directory. A crash leaves either the old set of files or the new one, plus at worst
//   a temp file, which the store ignores (its name starts with '.' and has no final name).
//
// One writer per directory: the store deletes temp files it finds when it prunes, so two
// processes writing into one directory could delete each other's temp files.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace troupe {

// Conventional section names, so that the writer (parameter server) and the reader (resume)
// agree. A checkpoint may carry other sections too (e.g. one per optimizer state buffer).
namespace ckpt_section {
inline constexpr const char* params = "params";          // float32 parameters
inline constexpr const char* sampler = "sampler";        // sampler cursor
inline constexpr const char* rng = "rng";                // troupe::rng state (4 x u64)
inline constexpr const char* job = "job";                // job name (UTF-8)
inline constexpr const char* config = "config";          // config fingerprint (u64)
inline constexpr const char* optimizer_prefix = "opt/";  // "opt/" + optimizer buffer name
}  // namespace ckpt_section

struct checkpoint_section {
  std::string name;
  std::vector<std::uint8_t> bytes;
};

// One checkpoint in memory: a step and ordered, uniquely named sections. The typed accessors
// store little-endian bytes so a file moves between hosts; getters throw troupe::runtime_failure
// naming the section (and `source`, the file it came from, when it was loaded).
class checkpoint {
 public:
  std::int64_t step = 0;
  std::string source;  // file it was read from; empty when built in memory

  const std::vector<checkpoint_section>& sections() const { return sections_; }
  bool has(const std::string& name) const { return find(name) != nullptr; }
  // Null when absent.
  const std::vector<std::uint8_t>* find(const std::string& name) const;

  // Setters replace a section of the same name, keeping its position; new names are appended.
  void set_bytes(const std::string& name, const void* data, std::size_t bytes);
  void set_floats(const std::string& name, const float* data, std::size_t count);
  void set_floats(const std::string& name, const std::vector<float>& v) {
    set_floats(name, v.data(), v.size());
  }
  void set_u64s(const std::string& name, const std::vector<std::uint64_t>& v);
  void set_u64(const std::string& name, std::uint64_t v) { set_u64s(name, {v}); }
  void set_i64(const std::string& name, std::int64_t v) {
    set_u64s(name, {static_cast<std::uint64_t>(v)});
  }
  void set_string(const std::string& name, const std::string& s) {
    set_bytes(name, s.data(), s.size());
  }

  // Getters throw when the section is missing or its length does not fit the type.
  const std::vector<std::uint8_t>& bytes(const std::string& name) const;
  std::vector<float> floats(const std::string& name) const;
  std::vector<std::uint64_t> u64s(const std::string& name) const;
  std::uint64_t u64(const std::string& name) const;
  std::int64_t i64(const std::string& name) const { return static_cast<std::int64_t>(u64(name)); }
  std::string string(const std::string& name) const;

  bool operator==(const checkpoint& o) const;  // step and sections, not source

 private:
  [[noreturn]] void fail(const std::string& name, const std::string& what) const;
  std::vector<checkpoint_section> sections_;
};

// Writes `c` to exactly `path` (no temp file, no rename: the store adds those). fsyncs the file.
// Throws troupe::runtime_failure naming the file on any I/O error or duplicate section name.
void write_checkpoint_file(const std::string& path, const checkpoint& c);

// Reads and fully validates one file. Throws troupe::runtime_failure "PATH: what" on a short
// file, bad magic, unknown version, truncation, trailing bytes, a section running past the end,
// or a checksum mismatch.
checkpoint read_checkpoint_file(const std::string& path);

// The same checks on a file's bytes already in memory; `source` names them in messages (and
// becomes checkpoint::source). read_checkpoint_file reads the file and calls this, so that the
// fuzz target tests/fuzz/checkpoint.cpp reaches the whole reader without a file per input.
checkpoint parse_checkpoint(const std::uint8_t* data, std::size_t size, const std::string& source);

struct skipped_checkpoint {
  std::string path;
  std::string reason;  // the read error, e.g. "checksum mismatch (stored ..., computed ...)"
  // Written in a format version this build does not read (by a newer build): never damage, so a
  // resume must not pass over it to an older file.
  bool other_version = false;
};

struct load_result {
  std::optional<checkpoint> loaded;         // the newest valid one; empty when none is valid
  std::vector<skipped_checkpoint> skipped;  // newer files passed over, newest first
  // One line for the log: "resumed from DIR/ckpt-000000120.trp (step 120); skipped
  // DIR/ckpt-000000130.trp: truncated: ..." or "no valid checkpoint in DIR (...)".
  std::string summary;
};

class checkpoint_store {
 public:
  // `keep_last`: how many checkpoints to keep after each write (0 keeps all). More than one, so
  // that a checkpoint damaged after it was written (disk, an operator) still has a predecessor.
  explicit checkpoint_store(std::string dir, std::size_t keep_last = 3);

  const std::string& dir() const { return dir_; }

  // "DIR/ckpt-000000123.trp": nine digits so names sort by step; larger steps just get longer.
  std::string path_for(std::int64_t step) const;

  // Atomically writes `c` as the checkpoint of c.step (creating the directory if needed), then
  // applies retention. Returns the final path. Throws troupe::runtime_failure naming the file.
  std::string write(const checkpoint& c);

  // Steps and paths of the final-named checkpoint files, oldest first (not validated).
  struct entry {
    std::int64_t step;
    std::string path;
  };
  std::vector<entry> list() const;

  // Tries files newest first; a file that fails validation is recorded in `skipped` and the next
  // older one is tried. A missing directory is "no checkpoint", not an error.
  load_result load_newest_valid() const;

  // Deletes all but the newest `keep_last` checkpoints and any leftover temp files.
  void prune() const;

 private:
  std::string dir_;
  std::size_t keep_last_;
};

}  // namespace troupe
