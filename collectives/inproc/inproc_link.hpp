#pragma once
// The in-process transport: ranks are threads (or actors) of one process. Nothing is copied on
// the way: a posted message carries the sender's pointer, the receiver reduces or copies
// straight out of the sender's buffer, and only then is the sender's ticket completed.
#include <memory>

#include "collectives/communicator.hpp"
#include "collectives/inproc/rank_group.hpp"

namespace troupe::collectives {

class inproc_hub_state;

// One hub per group of in-process ranks; hand the same hub to every rank's thread.
// This class is thread-safe.
class inproc_hub : public rank_group {
 public:
  explicit inproc_hub(int size);
  ~inproc_hub();

  // A communicator for `rank` with a link to every other rank of the hub.
  communicator connect(int rank);

 private:
  std::shared_ptr<inproc_hub_state> state_;
};

}  // namespace troupe::collectives
