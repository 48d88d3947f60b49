#pragma once
// Where a run writes (its report, its logs, its checkpoints) is checked before anything trains:
// a report that cannot be written after an hour of training loses the hour's record, and a log
// or checkpoint directory that cannot be made would otherwise be skipped in silence.
#include <string>

namespace troupe {

// Makes `dir` (and its parents) and writes a scratch file in it. Throws troupe::input_error
// naming `what` (e.g. "--log-dir"), the directory and the system's reason when either fails.
void require_writable_dir(const std::string& dir, const std::string& what);

// Makes the directory of `file` and opens `file` for writing without truncating it (a file the
// check created is removed again). Throws troupe::input_error naming `what` and the file when
// either fails, or when `file` is a directory.
void require_writable_file(const std::string& file, const std::string& what);

}  // namespace troupe
