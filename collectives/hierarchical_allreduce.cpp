#include "collectives/hierarchical_allreduce.hpp"

#include <map>
#include <string>

#include "collectives/ring.hpp"

namespace troupe::collectives {
namespace {

// Phases of the one op id: 0-1 inside the group, 2-3 across leaders, 4 the broadcast.
constexpr std::uint32_t phase_inside = 0, phase_leaders = 2, phase_broadcast = 4;

}  // namespace

void hierarchical_allreduce(const hierarchical_allreduce_options& options) {
  op_context ctx;
  const op_tag tag = begin_op(options, "hierarchical allreduce", ctx);
  communicator& comm = *options.comm;
  if (options.group_of.size() != static_cast<std::size_t>(comm.size()))
    throw input_error("hierarchical allreduce: group_of has " +
                      std::to_string(options.group_of.size()) + " entries for " +
                      std::to_string(comm.size()) + " ranks");
  std::map<int, std::vector<int>> members_of;  // group id -> ranks, ascending
  for (int rank = 0; rank < comm.size(); ++rank)
    members_of[options.group_of[static_cast<std::size_t>(rank)]].push_back(rank);
  const std::vector<int>& my_group =
      members_of[options.group_of[static_cast<std::size_t>(comm.rank())]];
  std::vector<int> leaders;
  for (const auto& entry : members_of) leaders.push_back(entry.second.front());

  communicator group = comm.subset(my_group);
  ring_allreduce(group, options.data, tag, phase_inside, ctx, options.chunk_bytes);
  if (my_group.front() == comm.rank()) {
    communicator across = comm.subset(leaders);
    ring_allreduce(across, options.data, tag, phase_leaders, ctx, options.chunk_bytes);
  }
  chain_broadcast(group, reinterpret_cast<std::byte*>(options.data.data()),
                  options.data.size() * sizeof(float), 0, tag, phase_broadcast, ctx,
                  options.chunk_bytes);
}

}  // namespace troupe::collectives
