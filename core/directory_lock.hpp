#pragma once
// One owner of a directory at a time: an exclusive flock(2) on DIR/lock, held for the object's
// life and released by the kernel when the process ends however it ends (a SIGKILLed owner
// leaves no stale lock). The file holds the owner's pid, which a refused second owner names.
// A service's state directory is taken this way, so that two services never share one database.
#include <string>

namespace troupe {

class directory_lock {
 public:
  // Takes DIR/lock (the directory must exist). Throws input_error naming the directory and the
  // holder's pid when another process holds it, runtime_failure when the file cannot be made.
  // `owner` names the kind of owner in the message ("troupe serve").
  directory_lock(const std::string& dir, const std::string& owner);
  ~directory_lock();
  directory_lock(const directory_lock&) = delete;
  directory_lock& operator=(const directory_lock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace troupe
