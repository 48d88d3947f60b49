#include "data/csv.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "core/testing.hpp"

namespace fs = std::filesystem;
using namespace troupe::data;

namespace {

struct temp_file {
  std::string path;
  explicit temp_file(const std::string& text) {
    troupe::rng r{
        static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count())};
    path = (fs::temp_directory_path() / ("troupe-csv-" + std::to_string(r.next_u64()) + ".csv"))
               .string();
    std::ofstream(path) << text;
  }
  ~temp_file() { fs::remove(path); }
};

std::string error_of(const std::string& path, const csv_options& o = {}) {
  return troupe::testing::input_error_of([&] { load_csv(path, o); });
}

}  // namespace

TEST_CASE("CSV classification with header, label last, blank lines and CRLF") {
  temp_file f{"a,b,label\r\n1.5, -2 ,1\r\n\r\n3e1,4,0\n+5,6,2\n"};
  csv_options o;
  o.header = true;
  const dataset d = load_csv(f.path, o);
  CHECK(d.n == 3);
  CHECK(d.sample_shape == std::vector<std::size_t>{2});
  CHECK(d.x == std::vector<float>{1.5f, -2.0f, 30.0f, 4.0f, 5.0f, 6.0f});
  CHECK(d.labels == std::vector<std::int32_t>{1, 0, 2});
  CHECK(d.classes == 3);
  CHECK(d.targets.empty());
  CHECK(d.name == fs::path(f.path).stem().string());
}

TEST_CASE("CSV regression with the label in the first column and another delimiter") {
  temp_file f{"0.25;1;2\n-1.75;3;4\n"};
  csv_options o;
  o.label_column = 0;
  o.task = csv_task::regression;
  o.delimiter = ';';
  const dataset d = load_csv(f.path, o);
  CHECK(d.n == 2);
  CHECK(d.x == std::vector<float>{1, 2, 3, 4});
  CHECK(d.targets == std::vector<float>{0.25f, -1.75f});
  CHECK(d.labels.empty());
  CHECK_FALSE(d.is_classification());
}

TEST_CASE("CSV errors name the file and line") {
  SUBCASE("missing file") {
    const std::string p = "/nonexistent/troupe/x.csv";
    CHECK(error_of(p).find(p) != std::string::npos);
  }
  SUBCASE("ragged row") {
    temp_file f{"1,2,0\n3,4\n"};
    const auto msg = error_of(f.path);
    CHECK(msg.find(f.path + " line 2") != std::string::npos);
  }
  SUBCASE("not a number") {
    temp_file f{"1,2,0\n\n3,x4,1\n"};
    const auto msg = error_of(f.path);
    CHECK(msg.find(f.path + " line 3") != std::string::npos);
    CHECK(msg.find("x4") != std::string::npos);
  }
  SUBCASE("fractional class label") {
    temp_file f{"1,2,0.5\n"};
    CHECK(error_of(f.path).find(f.path + " line 1") != std::string::npos);
  }
  SUBCASE("negative class label") {
    temp_file f{"1,2,0\n1,2,-1\n"};
    CHECK(error_of(f.path).find(f.path + " line 2") != std::string::npos);
  }
  SUBCASE("label column out of range") {
    temp_file f{"1,2,0\n"};
    csv_options o;
    o.label_column = 3;
    CHECK(error_of(f.path, o).find(f.path) != std::string::npos);
  }
  SUBCASE("header only") {
    temp_file f{"a,b,c\n"};
    csv_options o;
    o.header = true;
    CHECK(error_of(f.path, o).find("no data rows") != std::string::npos);
  }
}
