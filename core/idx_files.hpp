#pragma once
// Which file an IDX dataset directory holds for one of its names. README promises each file
// plain or gzip'ed (NAME or NAME.gz); the config check and the loader (data::idx_file_in) both
// ask here, so a directory the check accepts is one the loader reads.
#include <string>

namespace troupe {

// dir/NAME.gz when that is a regular file, else dir/NAME when that is, else "".
std::string find_idx_file(const std::string& dir, const std::string& name);

}  // namespace troupe
