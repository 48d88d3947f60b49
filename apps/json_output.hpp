#pragma once
// A benchmark's `--json FILE`: opened when the command starts, so that a path it cannot write is
// refused (exit 2) before minutes of measuring, and written once the figures are in.
#include <fstream>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace troupe::apps {

class json_output {
 public:
  // `path`: the flag's value, if given (nothing is written otherwise).
  explicit json_output(const std::optional<std::string>& path) {
    if (!path) return;
    path_ = *path;
    out_.open(path_);
    if (!out_) throw input_error("cannot write --json file '" + path_ + "'");
  }

  bool wanted() const { return !path_.empty(); }

  void write(const nlohmann::json& j, int indent = 1) {
    if (!wanted()) return;
    out_ << j.dump(indent) << '\n';
    out_.flush();
    if (!out_) throw runtime_failure("writing --json file '" + path_ + "' failed");
  }

 private:
  std::string path_;
  std::ofstream out_;
};

}  // namespace troupe::apps
