#include "data/csv.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace troupe::data {
namespace {

std::string_view trim(std::string_view s) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> fields(std::string_view line, char delim) {
  std::vector<std::string_view> out;
  for (;;) {
    const auto at = line.find(delim);
    out.push_back(trim(line.substr(0, at)));
    if (at == std::string_view::npos) return out;
    line.remove_prefix(at + 1);
  }
}

// from_chars rather than strtof: locale-independent and it reports where parsing stopped.
bool parse_float(std::string_view s, float& v) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && r.ec == std::errc{} && r.ptr == s.data() + s.size() && std::isfinite(v);
}

}  // namespace

dataset load_csv(const std::string& path, const csv_options& options) {
  std::ifstream in(path);
  if (!in) throw input_error("cannot open CSV file " + path);
  dataset d;
  d.name = std::filesystem::path(path).stem().string();
  std::size_t width = 0, label_at = 0, lineno = 0;
  bool header_pending = options.header;
  const auto where = [&] { return "CSV " + path + " line " + std::to_string(lineno) + ": "; };
  std::string line;
  while (std::getline(in, line)) {
    ++lineno;
    if (trim(line).empty()) continue;
    const auto f = fields(line, options.delimiter);
    if (width == 0) {
      width = f.size();
      if (width < 2) throw input_error(where() + "need at least 2 columns (features and label)");
      const long col = options.label_column < 0 ? static_cast<long>(width) + options.label_column
                                                : options.label_column;
      if (col < 0 || col >= static_cast<long>(width)) {
        throw input_error(where() + "label column " + std::to_string(options.label_column) +
                          " is outside the " + std::to_string(width) + " columns");
      }
      label_at = static_cast<std::size_t>(col);
    } else if (f.size() != width) {
      throw input_error(where() + "expected " + std::to_string(width) + " fields, found " +
                        std::to_string(f.size()));
    }
    if (header_pending) {
      header_pending = false;
      continue;
    }
    for (std::size_t c = 0; c < width; ++c) {
      float v = 0;
      if (!parse_float(f[c], v)) {
        throw input_error(where() + "column " + std::to_string(c + 1) + " \"" + std::string(f[c]) +
                          "\" is not a number");
      }
      if (c != label_at) {
        d.x.push_back(v);
      } else if (options.task == csv_task::regression) {
        d.targets.push_back(v);
      } else {
        if (v < 0 || v != std::floor(v) || v > 1e6f) {
          throw input_error(where() + "label \"" + std::string(f[c]) +
                            "\" is not a non-negative integer class id");
        }
        d.labels.push_back(static_cast<std::int32_t>(v));
      }
    }
    ++d.n;
  }
  if (d.n == 0) throw input_error("CSV " + path + " holds no data rows");
  d.sample_shape = {width - 1};
  if (options.task == csv_task::classification) {
    d.classes = static_cast<std::size_t>(*std::max_element(d.labels.begin(), d.labels.end())) + 1;
  }
  return d;
}

}  // namespace troupe::data
