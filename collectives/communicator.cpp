#include "collectives/communicator.hpp"

#include <algorithm>
#include <set>
#include <string>

namespace troupe::collectives {

communicator::communicator(int rank, int size, std::vector<std::shared_ptr<peer_link>> links)
    : rank_(rank), size_(size), links_(std::move(links)) {
  if (size < 1 || rank < 0 || rank >= size)
    throw input_error("communicator: rank " + std::to_string(rank) + " outside a group of " +
                      std::to_string(size));
  links_.resize(static_cast<std::size_t>(size));
}

bool communicator::connected(int peer) const {
  return peer >= 0 && peer < size_ && links_[static_cast<std::size_t>(peer)] != nullptr;
}

peer_link& communicator::link(int peer) const {
  if (!connected(peer))
    throw input_error("communicator: rank " + std::to_string(rank_) + " has no link to rank " +
                      std::to_string(peer) + " (connect it when building the communicator)");
  return *links_[static_cast<std::size_t>(peer)];
}

communicator communicator::subset(const std::vector<int>& ranks) const {
  auto me = std::find(ranks.begin(), ranks.end(), rank_);
  if (me == ranks.end())
    throw input_error("communicator: rank " + std::to_string(rank_) +
                      " is not a member of the requested subset");
  std::vector<std::shared_ptr<peer_link>> links;
  for (int r : ranks)
    links.push_back(r == rank_ ? nullptr : links_.at(static_cast<std::size_t>(r)));
  communicator sub{static_cast<int>(me - ranks.begin()), static_cast<int>(ranks.size()),
                   std::move(links)};
  sub.next_op_ = next_op_;
  return sub;
}

void communicator::close() {
  for (auto& l : links_)
    if (l) l->close();
}

std::vector<int> ring_peers(int rank, int size) {
  std::set<int> peers;
  if (size > 1) {
    peers.insert(right_of(rank, size));
    peers.insert(left_of(rank, size));
  }
  return {peers.begin(), peers.end()};
}

std::vector<int> default_peers(int rank, int size) {
  if (size > full_mesh_ranks) return ring_peers(rank, size);
  std::vector<int> peers;
  for (int r = 0; r < size; ++r)
    if (r != rank) peers.push_back(r);
  return peers;
}

bool fully_connected(const communicator& comm) {
  for (int r = 0; r < comm.size(); ++r)
    if (r != comm.rank() && !comm.connected(r)) return false;
  return true;
}

}  // namespace troupe::collectives
