#include "data/idx.hpp"

#include <doctest/doctest.h>

#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "core/idx_files.hpp"
#include "core/rng.hpp"
#include "core/testing.hpp"

namespace fs = std::filesystem;
using namespace troupe::data;

using troupe::testing::temp_dir;

using troupe::testing::input_error_of;

namespace {

std::vector<std::uint8_t> read_raw(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_raw(const std::string& p, const std::vector<std::uint8_t>& b) {
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

struct sample_files {
  std::vector<std::uint8_t> pixels, labels;
  std::size_t n = 7, rows = 5, cols = 3;
  explicit sample_files(std::uint64_t seed) {
    troupe::rng r{seed};
    for (std::size_t i = 0; i < n * rows * cols; ++i) pixels.push_back(r.below(256) & 0xff);
    for (std::size_t i = 0; i < n; ++i) labels.push_back(r.below(4) & 0xff);
  }
};

}  // namespace

TEST_CASE("IDX round trip, gzip and plain") {
  temp_dir dir;
  sample_files s{11};
  for (bool gz : {true, false}) {
    CAPTURE(gz);
    const auto img = dir / (gz ? "i.gz" : "i"), lab = dir / (gz ? "l.gz" : "l");
    write_idx_images(img, s.n, s.rows, s.cols, s.pixels, gz);
    write_idx_labels(lab, s.labels, gz);
    // gzip magic present exactly when asked for, so both reader paths are exercised.
    CHECK((read_raw(img)[0] == 0x1f) == gz);
    const dataset d = load_idx_pair(img, lab, "tiny");
    CHECK(d.name == "tiny");
    CHECK(d.n == s.n);
    CHECK(d.sample_shape == std::vector<std::size_t>{1, s.rows, s.cols});
    REQUIRE(d.x.size() == s.pixels.size());
    for (std::size_t i = 0; i < s.pixels.size(); ++i) {
      CHECK(d.x[i] == doctest::Approx(s.pixels[i] / 255.0));
      CHECK(d.x[i] >= 0.0f);
      CHECK(d.x[i] <= 1.0f);
    }
    REQUIRE(d.labels.size() == s.n);
    for (std::size_t i = 0; i < s.n; ++i) CHECK(d.labels[i] == s.labels[i]);
    CHECK(d.classes ==
          static_cast<std::size_t>(*std::max_element(s.labels.begin(), s.labels.end()) + 1));
  }
}

TEST_CASE("IDX bad input names the file") {
  temp_dir dir;
  sample_files s{12};
  const auto img = dir / "img.gz", lab = dir / "lab.gz";
  write_idx_images(img, s.n, s.rows, s.cols, s.pixels, true);
  write_idx_labels(lab, s.labels, true);

  SUBCASE("missing file") {
    const auto missing = dir / "nope.gz";
    const auto msg = input_error_of([&] { read_idx_images(missing); });
    CHECK(msg.find(missing) != std::string::npos);
  }
  SUBCASE("truncated plain file, truncated gzip stream") {
    const auto plain = dir / "plain";
    write_idx_images(plain, s.n, s.rows, s.cols, s.pixels, false);
    // A whole file and how much of it the cut copy keeps.
    const std::pair<std::string, std::size_t> cuts[] = {{plain, read_raw(plain).size() - 10},
                                                        {img, read_raw(img).size() / 2}};
    for (const auto& [whole, keep] : cuts) {
      const auto p = dir / ("cut" + std::filesystem::path(whole).extension().string());
      auto bytes = read_raw(whole);
      bytes.resize(keep);
      write_raw(p, bytes);
      const auto msg = input_error_of([&] { read_idx_images(p); });
      CHECK(msg.find(p) != std::string::npos);
      CHECK(msg.find("truncated") != std::string::npos);
    }
  }
  SUBCASE("header cut short") {
    const auto p = dir / "short";
    write_raw(p, {0, 0, 8});
    const auto msg = input_error_of([&] { read_idx_labels(p); });
    CHECK(msg.find(p) != std::string::npos);
  }
  SUBCASE("wrong magic: labels file read as images") {
    const auto msg = input_error_of([&] { read_idx_images(lab); });
    CHECK(msg.find(lab) != std::string::npos);
    CHECK(msg.find("magic") != std::string::npos);
  }
  SUBCASE("count mismatch names both files") {
    const auto lab2 = dir / "lab2.gz";
    auto fewer = s.labels;
    fewer.pop_back();
    write_idx_labels(lab2, fewer, true);
    const auto msg = input_error_of([&] { load_idx_pair(img, lab2, "x"); });
    CHECK(msg.find(img) != std::string::npos);
    CHECK(msg.find(lab2) != std::string::npos);
    CHECK(msg.find("mismatch") != std::string::npos);
  }
}

TEST_CASE("Fashion-MNIST loads completely and quickly") {
  const std::string dir = "/usr/share/datasets/fashion-mnist";
  if (!fs::exists(dir + "/train-images-idx3-ubyte.gz")) {
    MESSAGE("skipped: " << dir << " not installed (Debian package dataset-fashion-mnist)");
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const train_test tt = load_fashion_mnist(dir);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Reported, not asserted: speed is checked by benchmarks, and CI machines are shared.
  MESSAGE("load_fashion_mnist took " << secs << " s");
  CHECK(tt.train.n == 60000);
  CHECK(tt.test.n == 10000);
  for (const dataset* d : {&tt.train, &tt.test}) {
    CHECK(d->sample_shape == std::vector<std::size_t>{1, 28, 28});
    CHECK(d->classes == 10);
    CHECK(d->x.size() == d->n * 784);
    std::vector<std::size_t> counts(10, 0);
    for (auto l : d->labels) ++counts.at(static_cast<std::size_t>(l));
    for (auto c : counts) CHECK(c == d->n / 10);
    const auto [lo, hi] = std::minmax_element(d->x.begin(), d->x.end());
    CHECK(*lo == 0.0f);
    CHECK(*hi == 1.0f);
  }
}

TEST_CASE("an IDX directory of plain files loads as well as one of .gz files") {
  // The config check accepts NAME or NAME.gz for each of the four files; loading must too.
  for (bool gz : {true, false}) {
    CAPTURE(gz);
    temp_dir dir;
    sample_files train{21}, test{22};
    const std::string ext = gz ? ".gz" : "";
    write_idx_images(dir / ("train-images-idx3-ubyte" + ext), train.n, train.rows, train.cols,
                     train.pixels, gz);
    write_idx_labels(dir / ("train-labels-idx1-ubyte" + ext), train.labels, gz);
    write_idx_images(dir / ("t10k-images-idx3-ubyte" + ext), test.n, test.rows, test.cols,
                     test.pixels, gz);
    write_idx_labels(dir / ("t10k-labels-idx1-ubyte" + ext), test.labels, gz);
    const train_test tt = load_fashion_mnist(dir.path.string());
    CHECK(tt.train.n == train.n);
    CHECK(tt.test.n == test.n);
    CHECK(idx_file_in(dir.path.string(), "t10k-images-idx3-ubyte") ==
          dir / ("t10k-images-idx3-ubyte" + ext));
  }
}

TEST_CASE("one resolver for the config check and the loader: NAME.gz, else NAME, else none") {
  temp_dir dir;
  const std::string d = dir.path.string();
  CHECK(troupe::find_idx_file(d, "a").empty());
  CHECK(idx_file_in(d, "a") == dir / "a.gz");  // what an error then names
  write_raw(dir / "a", {1});
  CHECK(troupe::find_idx_file(d, "a") == dir / "a");
  write_raw(dir / "a.gz", {1});
  CHECK(troupe::find_idx_file(d, "a") == dir / "a.gz");
  CHECK(idx_file_in(d, "a") == dir / "a.gz");
  fs::create_directories(dir.path / "b.gz");  // a directory is not a file
  CHECK(troupe::find_idx_file(d, "b").empty());
}
