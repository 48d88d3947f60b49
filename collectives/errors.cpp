#include "collectives/errors.hpp"

namespace troupe::collectives {

const char* to_string(failure_kind kind) {
  switch (kind) {
    case failure_kind::timeout:
      return "timeout";
    case failure_kind::aborted:
      return "aborted";
    case failure_kind::peer_closed:
      return "peer_closed";
    case failure_kind::protocol:
      return "protocol";
  }
  return "unknown";
}

}  // namespace troupe::collectives
