#pragma once
// A whole file as bytes: the one reader behind the job service's stored files, the cluster's
// certificates and its secrets (which check the file's mode first).
#include <fstream>
#include <sstream>
#include <string>

#include "core/error.hpp"

namespace troupe {

// input_error naming the path when it cannot be opened.
inline std::string read_file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw input_error(path + ": cannot read it");
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace troupe
