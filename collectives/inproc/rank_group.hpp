#pragma once
// What the in-process rank groups (inproc_hub, shared_allreduce_group) share: a size fixed when
// made (at least 1), and state that every rank's thread reaches through the one object, which is
// therefore neither copied nor moved.
#include <string>

#include "core/error.hpp"

namespace troupe::collectives {

class rank_group {
 public:
  rank_group(const rank_group&) = delete;
  rank_group& operator=(const rank_group&) = delete;

  int size() const { return size_; }

 protected:
  // `what` names the group in the error a size below 1 gets.
  rank_group(int size, const char* what) : size_(size) {
    if (size < 1) throw input_error(std::string(what) + ": size must be at least 1");
  }
  ~rank_group() = default;

 private:
  int size_;
};

}  // namespace troupe::collectives
