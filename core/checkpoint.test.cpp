#include "core/checkpoint.hpp"
#include "core/testing.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace fs = std::filesystem;
using troupe::checkpoint;
using troupe::checkpoint_store;

using troupe::testing::flip_byte;
using troupe::testing::temp_dir;

namespace {

// A checkpoint shaped like the parameter server's: params, optimizer buffers, cursor, rng, names.
checkpoint sample(std::int64_t step, std::size_t n_params = 1000) {
  troupe::rng r(static_cast<std::uint64_t>(step) + 7);
  checkpoint c;
  c.step = step;
  std::vector<float> p(n_params), m(n_params);
  for (auto& x : p) x = r.uniform_float(-1, 1);
  for (auto& x : m) x = r.uniform_float(0, 1e-3f);
  c.set_floats(troupe::ckpt_section::params, p);
  c.set_floats(std::string(troupe::ckpt_section::optimizer_prefix) + "m", m);
  c.set_u64s(troupe::ckpt_section::sampler, {3, static_cast<std::uint64_t>(step * 64)});
  const auto st = r.state();
  c.set_u64s(troupe::ckpt_section::rng, {st[0], st[1], st[2], st[3]});
  c.set_string(troupe::ckpt_section::job, "fashion-mlp");
  c.set_u64(troupe::ckpt_section::config, 0xfeedfacecafebeefULL);
  c.set_i64("step-signed", -step);
  return c;
}

std::uintmax_t file_size(const std::string& p) {
  return fs::file_size(p);
}

void truncate_to(const std::string& p, std::uintmax_t size) {
  fs::resize_file(p, size);
}

}  // namespace

TEST_CASE("checkpoint: typed sections round-trip in memory") {
  const checkpoint c = sample(5, 10);
  CHECK(c.floats(troupe::ckpt_section::params).size() == 10);
  CHECK(c.u64s(troupe::ckpt_section::sampler) == std::vector<std::uint64_t>{3, 320});
  CHECK(c.string(troupe::ckpt_section::job) == "fashion-mlp");
  CHECK(c.u64(troupe::ckpt_section::config) == 0xfeedfacecafebeefULL);
  CHECK(c.i64("step-signed") == -5);
  CHECK_FALSE(c.has("nope"));
  CHECK_THROWS_WITH_AS(c.floats("nope"), doctest::Contains("section 'nope': missing"),
                       troupe::runtime_failure);
  CHECK_THROWS_WITH_AS(c.u64(troupe::ckpt_section::sampler),
                       doctest::Contains("expected one u64, found 2"), troupe::runtime_failure);
  checkpoint d = c;
  d.set_string(troupe::ckpt_section::job, "other");  // replaces in place, keeps order
  CHECK(d.sections().size() == c.sections().size());
  CHECK_FALSE(d == c);
}

TEST_CASE("checkpoint file: round trip keeps every byte, the step and the section order") {
  temp_dir d;
  const std::string p = d.str() + "/one.trp";
  checkpoint c = sample(42);
  c.set_bytes("empty", nullptr, 0);
  troupe::write_checkpoint_file(p, c);
  const checkpoint back = troupe::read_checkpoint_file(p);
  CHECK(back == c);
  CHECK(back.source == p);
  CHECK(back.floats(troupe::ckpt_section::params) == c.floats(troupe::ckpt_section::params));
  CHECK(back.bytes("empty").empty());
  // The file is exactly what the header layout says: 32 + sections + 8.
  std::uintmax_t expect = 32 + 8;
  for (const auto& s : c.sections()) expect += 4 + s.name.size() + 8 + s.bytes.size();
  CHECK(file_size(p) == expect);
}

TEST_CASE("checkpoint file: each kind of damage is named, with the file") {
  temp_dir d;
  const std::string p = d.str() + "/x.trp";
  troupe::write_checkpoint_file(p, sample(1, 50));
  const auto size = file_size(p);

  SUBCASE("too short") {
    truncate_to(p, 10);
    const std::string want = p + ": too short for a checkpoint header";
    CHECK_THROWS_WITH_AS(troupe::read_checkpoint_file(p), doctest::Contains(want.c_str()),
                         troupe::runtime_failure);
  }
  SUBCASE("truncated") {
    truncate_to(p, size - 3);
    const std::string want =
        "truncated: " + std::to_string(size - 3) + " of " + std::to_string(size) + " bytes";
    CHECK_THROWS_WITH_AS(troupe::read_checkpoint_file(p), doctest::Contains(want.c_str()),
                         troupe::runtime_failure);
  }
  SUBCASE("trailing bytes") {
    std::ofstream(p, std::ios::app | std::ios::binary) << "xx";
    CHECK_THROWS_WITH_AS(troupe::read_checkpoint_file(p), doctest::Contains("2 trailing bytes"),
                         troupe::runtime_failure);
  }
  SUBCASE("bad magic") {
    flip_byte(p, 0);
    CHECK_THROWS_WITH_AS(troupe::read_checkpoint_file(p), doctest::Contains("bad magic"),
                         troupe::runtime_failure);
  }
  SUBCASE("unknown version") {
    flip_byte(p, 8);
    CHECK_THROWS_WITH_AS(troupe::read_checkpoint_file(p),
                         doctest::Contains("unsupported format version"), troupe::runtime_failure);
  }
  SUBCASE("a flipped byte anywhere after the size field is a checksum mismatch") {
    // Every offset from the step field to the checksum itself: a single changed byte is always
    // detected (FNV-1a rounds are bijections), so this checks all of them, not a sample.
    for (std::uintmax_t off = 16; off < size; ++off) {
      if (off >= 24 && off < 32) continue;  // the size field reads as truncation/trailing
      flip_byte(p, off);
      CHECK_THROWS_WITH_AS(troupe::read_checkpoint_file(p), doctest::Contains("checksum mismatch"),
                           troupe::runtime_failure);
      flip_byte(p, off);  // restore
    }
    CHECK_NOTHROW(troupe::read_checkpoint_file(p));
  }
  SUBCASE("missing file") {
    CHECK_THROWS_WITH_AS(troupe::read_checkpoint_file(d.str() + "/absent.trp"),
                         doctest::Contains("absent.trp: cannot open"), troupe::runtime_failure);
  }
}

TEST_CASE("store: names, list order, round trip through the newest") {
  temp_dir d;
  checkpoint_store store(d.str(), 0);
  CHECK(store.path_for(123) == d.str() + "/ckpt-000000123.trp");
  CHECK(store.path_for(12345678901) == d.str() + "/ckpt-12345678901.trp");
  CHECK_THROWS_AS(store.path_for(-1), troupe::runtime_failure);

  for (std::int64_t s : {10, 30, 20}) CHECK(store.write(sample(s)) == store.path_for(s));
  const auto l = store.list();
  REQUIRE(l.size() == 3);
  CHECK(l[0].step == 10);
  CHECK(l[1].step == 20);
  CHECK(l[2].step == 30);

  const auto r = store.load_newest_valid();
  REQUIRE(r.loaded);
  CHECK(*r.loaded == sample(30));
  CHECK(r.skipped.empty());
  CHECK(r.summary == "resuming from " + store.path_for(30) + " (step 30)");
}

TEST_CASE("store: a missing or empty directory is no checkpoint, not an error") {
  temp_dir d;
  checkpoint_store absent(d.str() + "/not-there");
  CHECK(absent.list().empty());
  const auto r = absent.load_newest_valid();
  CHECK_FALSE(r.loaded);
  CHECK(r.summary == "no checkpoint in " + d.str() + "/not-there");
  // write() creates it.
  CHECK_NOTHROW(absent.write(sample(1, 4)));
  CHECK(absent.load_newest_valid().loaded->step == 1);
}

TEST_CASE("store: a torn newest file falls back to the previous one, at any tear offset") {
  temp_dir d;
  checkpoint_store store(d.str(), 0);
  store.write(sample(100, 200));
  const std::string newest = store.write(sample(200, 200));
  const auto size = file_size(newest);
  troupe::rng r(99);
  for (int trial = 0; trial < 40; ++trial) {
    const auto cut = r.below(size);  // 0 .. size-1 bytes kept
    store.write(sample(200, 200));   // restore, then tear
    truncate_to(newest, cut);
    const auto res = store.load_newest_valid();
    REQUIRE(res.loaded);
    CHECK(res.loaded->step == 100);
    CHECK(*res.loaded == sample(100, 200));
    REQUIRE(res.skipped.size() == 1);
    CHECK(res.skipped[0].path == newest);
    CHECK((res.skipped[0].reason.find("truncated") == 0 ||
           res.skipped[0].reason.find("too short") == 0));
    CHECK(res.summary.find("skipped " + newest + ": ") != std::string::npos);
  }
}

TEST_CASE("store: a corrupted byte falls back; two bad files fall back twice") {
  temp_dir d;
  checkpoint_store store(d.str(), 0);
  store.write(sample(1, 100));
  const std::string p2 = store.write(sample(2, 100));
  const std::string p3 = store.write(sample(3, 100));
  flip_byte(p3, file_size(p3) / 2);
  auto res = store.load_newest_valid();
  REQUIRE(res.loaded);
  CHECK(res.loaded->step == 2);
  REQUIRE(res.skipped.size() == 1);
  CHECK(res.skipped[0].reason.find("checksum mismatch") == 0);

  fs::resize_file(p2, 0);
  res = store.load_newest_valid();
  REQUIRE(res.loaded);
  CHECK(res.loaded->step == 1);
  CHECK(res.skipped.size() == 2);
  CHECK(res.skipped[0].path == p3);
  CHECK(res.skipped[1].path == p2);

  // Every file bad: nothing loaded, and the summary says why for each.
  flip_byte(store.path_for(1), 40);
  res = store.load_newest_valid();
  CHECK_FALSE(res.loaded);
  CHECK(res.skipped.size() == 3);
  CHECK(res.summary.rfind("no valid checkpoint in " + d.str() + " (3 files tried)", 0) == 0);
}

TEST_CASE("store: a file whose header step differs from its name is skipped") {
  temp_dir d;
  checkpoint_store store(d.str(), 0);
  store.write(sample(5, 10));
  // A valid file copied under a newer name (an operator's mistake) must not pass as step 9.
  fs::copy_file(store.path_for(5), store.path_for(9));
  const auto res = store.load_newest_valid();
  REQUIRE(res.loaded);
  CHECK(res.loaded->step == 5);
  REQUIRE(res.skipped.size() == 1);
  CHECK(res.skipped[0].reason == "header says step 5 but the file name says 9");
}

TEST_CASE("store: a crash between write and rename leaves a temp file that is ignored") {
  temp_dir d;
  checkpoint_store store(d.str(), 0);
  store.write(sample(7, 10));
  // What write() leaves when the process dies after fsync and before rename: a complete, valid
  // file under the temp name. It must neither be listed nor loaded.
  const std::string temp = d.str() + "/.ckpt-000000008.trp.tmp.12345.0";
  troupe::write_checkpoint_file(temp, sample(8, 10));
  // And a half-written one.
  const std::string torn = d.str() + "/.ckpt-000000009.trp.tmp.12345.1";
  troupe::write_checkpoint_file(torn, sample(9, 10));
  truncate_to(torn, 20);
  // Unrelated files are not ours either.
  std::ofstream(d.str() + "/notes.txt") << "hello";
  std::ofstream(d.str() + "/ckpt-abc.trp") << "x";

  CHECK(store.list().size() == 1);
  const auto res = store.load_newest_valid();
  REQUIRE(res.loaded);
  CHECK(res.loaded->step == 7);
  CHECK(res.skipped.empty());

  // The next successful write clears leftover temp files, and only them.
  store.write(sample(10, 10));
  CHECK_FALSE(fs::exists(temp));
  CHECK_FALSE(fs::exists(torn));
  CHECK(fs::exists(d.str() + "/notes.txt"));
  CHECK(fs::exists(d.str() + "/ckpt-abc.trp"));
}

TEST_CASE("store: retention keeps the newest K") {
  temp_dir d;
  checkpoint_store store(d.str(), 2);
  for (std::int64_t s = 1; s <= 5; ++s) store.write(sample(s, 8));
  const auto l = store.list();
  REQUIRE(l.size() == 2);
  CHECK(l[0].step == 4);
  CHECK(l[1].step == 5);
  // Rewriting an existing step replaces it atomically and keeps the count.
  checkpoint again = sample(5, 8);
  again.set_string(troupe::ckpt_section::job, "rewritten");
  store.write(again);
  CHECK(store.list().size() == 2);
  CHECK(store.load_newest_valid().loaded->string(troupe::ckpt_section::job) == "rewritten");
}

TEST_CASE("store: write errors name the file") {
  temp_dir d;
  // A regular file where the directory should be.
  const std::string blocker = d.str() + "/file";
  std::ofstream(blocker) << "x";
  checkpoint_store store(blocker + "/sub");
  const std::string want = blocker + "/sub";
  CHECK_THROWS_WITH_AS(store.write(sample(1, 4)), doctest::Contains(want.c_str()),
                       troupe::runtime_failure);
  CHECK_THROWS_AS(checkpoint_store(""), troupe::input_error);
}
