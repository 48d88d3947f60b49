#pragma once
// Secrets as bytes Troupe handles: the cluster's join token, its keys. They are made from the
// kernel's random source, compared in constant time, kept in files only this user can read, and
// never printed: every line Troupe writes passes redact() first.
#include <string>

namespace troupe {

// `bytes` random bytes from getrandom(2), as lowercase hex (2 * bytes characters).
std::string random_hex(std::size_t bytes);

// Equal strings, in a time that depends on the lengths only: where a wrong token first differs
// must not show in how long the answer takes. An empty `expected` matches nothing.
bool same_secret(const std::string& given, const std::string& expected);

// Writes `content` to `path` with mode 0600, whole or not at all (a temporary file in the same
// folder, fsync, rename). runtime_failure naming the path when it cannot.
void write_private_file(const std::string& path, const std::string& content);

// Reads a file that holds a secret. input_error naming the path when it is missing, or when
// group or others may read it (as ssh refuses such a key: someone else may have it too).
std::string read_private_file(const std::string& path);

// Registers a secret: from now on redact() replaces it. Secrets shorter than 8 characters are
// not registered (they would blank ordinary words).
void register_secret(const std::string& secret);

// `text` with every registered secret replaced by "[redacted]".
std::string redact(std::string text);

}  // namespace troupe
