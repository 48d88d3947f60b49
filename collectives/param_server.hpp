#pragma once
// Parameter-server traffic over the same peer links: the parameter vector of `count` floats is
// cut into one shard per server (segments, as in ring.cpp); shard k lives on rank servers[k].
// A training step is, for every worker, push(gradient) then pull(params); for every server,
// serve(): receive the pushes of all workers, sum them, let the caller apply the optimizer to
// its shard, then send the updated shard to every worker. Workers and servers are distinct
// ranks, and each worker needs a link to every server.
#include <functional>
#include <vector>

#include "collectives/options.hpp"
#include "core/span.hpp"

namespace troupe::collectives {

struct ps_layout {
  std::size_t count = 0;     // parameters in total
  std::vector<int> servers;  // shard k is owned by rank servers[k]
  std::vector<int> workers;  // ranks that push and pull

  std::size_t shard_offset(std::size_t k) const;
  std::size_t shard_length(std::size_t k) const;
};

struct ps_push_options : op_options {
  ps_layout layout;
  span<const float> gradient;  // count values; slice k goes to servers[k]
};
struct ps_pull_options : op_options {
  ps_layout layout;
  span<float> params;  // count values; slice k comes from servers[k]
};
struct ps_serve_options : op_options {
  ps_layout layout;
  span<float> shard;  // this server's slice of the parameters
  // Called once per step with the shard and the sum of the workers' gradient slices.
  std::function<void(span<float> shard, span<const float> gradient_sum)> apply;
};

void ps_push(const ps_push_options& options);
void ps_pull(const ps_pull_options& options);
// One step on a server: consumes the op ids of the workers' push and pull.
void ps_serve(const ps_serve_options& options);

}  // namespace troupe::collectives
