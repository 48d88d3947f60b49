#include "collectives/store.hpp"

#include <algorithm>
#include <chrono>

#include "collectives/errors.hpp"
#include "core/error.hpp"

namespace troupe::collectives {

std::string join_keys(const std::vector<std::string>& keys) {
  std::string out;
  for (const auto& k : keys) out += (out.empty() ? "" : ", ") + k;
  return out;
}

std::string link_key(const rendezvous_options& o, const char* transport, int from, int to) {
  return o.prefix + "/" + transport + "/" + std::to_string(from) + "->" + std::to_string(to);
}

void publish_end(const rendezvous_options& o, const char* transport, int peer,
                 const std::string& value) {
  o.rendezvous->set(link_key(o, transport, peer, o.rank), value);
}

std::string await_peer_end(const rendezvous_options& o, const char* transport, int peer,
                           const char* who, const char* what) {
  const std::string key = link_key(o, transport, o.rank, peer);
  // In slices, so that an abort (the job moved on to another generation, or ended) is seen
  // within one: a rank whose peers will never come must not wait out a step's deadline.
  constexpr auto slice = std::chrono::milliseconds(50);
  for (;;) {
    const auto until = std::min(o.deadline, steady::now() + slice);
    try {
      return o.rendezvous->wait_get(key, until);
    } catch (const runtime_failure&) {
      const std::string waiting =
          std::string(" while waiting for rank ") + std::to_string(peer) + " to publish " + what;
      const peer_info from{peer, "rendezvous " + key};
      if (o.abort && o.abort->aborted())
        throw collective_error(
            failure_kind::aborted, from,
            std::string(who) + ": aborted (" + o.abort->reason() + ")" + waiting);
      if (o.gone && o.gone->aborted())
        throw collective_error(failure_kind::peer_closed, from,
                               std::string(who) + ": " + o.gone->reason() + waiting);
      if (steady::now() >= o.deadline)
        throw runtime_failure(std::string(who) + ": rank " + std::to_string(peer) +
                              " never published " + what + " (rank " + std::to_string(o.rank) +
                              " waited until the deadline)");
    }
  }
}

std::string store::wait_get(const std::string& key, steady::time_point deadline) {
  wait({key}, deadline);
  auto value = get(key);
  if (!value) throw runtime_failure("store: key " + key + " vanished after wait");
  return *value;
}

}  // namespace troupe::collectives
