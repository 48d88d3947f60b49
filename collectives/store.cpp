#include "collectives/store.hpp"

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
  try {
    return o.rendezvous->wait_get(link_key(o, transport, o.rank, peer), o.deadline);
  } catch (const runtime_failure&) {
    throw runtime_failure(std::string(who) + ": rank " + std::to_string(peer) +
                          " never published " + what + " (rank " + std::to_string(o.rank) +
                          " waited until the deadline)");
  }
}

std::string store::wait_get(const std::string& key, steady::time_point deadline) {
  wait({key}, deadline);
  auto value = get(key);
  if (!value) throw runtime_failure("store: key " + key + " vanished after wait");
  return *value;
}

}  // namespace troupe::collectives
