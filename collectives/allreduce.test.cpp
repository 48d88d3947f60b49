#include "collectives/allreduce.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <vector>

#include "collectives/broadcast.hpp"
#include "collectives/exact_sums_testing.hpp"
#include "collectives/hierarchical_allreduce.hpp"
#include "collectives/inproc/inproc_link.hpp"
#include "collectives/param_server.hpp"
#include "collectives/ring.hpp"
#include "collectives/testing.hpp"

using namespace troupe::collectives;
using namespace std::chrono_literals;
using namespace troupe::collectives::testing;

namespace {

// Count of elements that differ from the exact sum.
std::size_t wrong(const std::vector<float>& got, int size) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) bad += got[i] != pattern_sum(size, i);
  return bad;
}

}  // namespace

TEST_CASE("ring allreduce sums exactly for 1 to 8 ranks and awkward sizes (inproc)") {
  check_exact_sums<inproc_hub>({0, 1, 2, 7, 13, 1009, 10007},
                               [](inproc_hub& hub, int size, std::size_t count, int rank) {
                                 communicator comm = hub.connect(rank);
                                 std::vector<float> data = pattern_data(rank, count);
                                 // Many chunks per segment: exercises the pipelining.
                                 auto o = testing::ring_options(comm, data, 10s, 256);
                                 o.job = o.generation = 1;
                                 allreduce(o);
                                 allreduce(o);  // a second op on the same communicator: sum of sums
                                 for (auto& v : data) v /= static_cast<float>(size);
                                 return wrong(data, size);
                               });
}

TEST_CASE("broadcast from every root reaches every rank") {
  const int size = 5;
  for (int root = 0; root < size; ++root) {
    inproc_hub hub{size};
    std::vector<int> ok(size, 0);
    auto errors = run_ranks(size, [&](int rank) {
      communicator comm = hub.connect(rank);
      std::vector<float> data(1001, rank == root ? 0.0f : -1.0f);
      if (rank == root)
        for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
      broadcast_options o;
      o.comm = &comm;
      o.data = as_bytes(data);
      o.root = root;
      o.chunk_bytes = 128;
      o.deadline = deadline_in(10s);
      broadcast(o);
      bool same = true;
      for (std::size_t i = 0; i < data.size(); ++i) same &= data[i] == static_cast<float>(i);
      ok[static_cast<std::size_t>(rank)] = same;
    });
    for (int rank = 0; rank < size; ++rank) {
      CHECK(errors[static_cast<std::size_t>(rank)] == "");
      CHECK(ok[static_cast<std::size_t>(rank)] == 1);
    }
  }
}

TEST_CASE("hierarchical allreduce equals the flat sum for uneven groups") {
  const int size = 7;
  const std::vector<int> group_of{0, 0, 0, 1, 1, 2, 0};  // groups of 4, 2 and 1 ranks
  inproc_hub hub{size};
  std::vector<std::size_t> bad(size, 99);
  auto errors = run_ranks(size, [&](int rank) {
    communicator comm = hub.connect(rank);
    std::vector<float> data(997);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = pattern(rank, i);
    hierarchical_allreduce_options o;
    o.comm = &comm;
    o.data = data;
    o.group_of = group_of;
    o.chunk_bytes = 512;
    o.deadline = deadline_in(10s);
    hierarchical_allreduce(o);
    bad[static_cast<std::size_t>(rank)] = wrong(data, size);
  });
  CHECK(testing::first_failure(errors, bad) == "");
}

TEST_CASE("parameter server: workers push gradients, servers apply SGD, workers pull") {
  // Ranks 0-1 are servers, 2-4 workers; 1001 parameters (odd shards).
  const int size = 5;
  ps_layout layout{1001, {0, 1}, {2, 3, 4}};
  inproc_hub hub{size};
  std::vector<std::vector<float>> pulled(size);
  auto errors = run_ranks(size, [&](int rank) {
    communicator comm = hub.connect(rank);
    std::vector<float> shard(rank < 2 ? layout.shard_length(static_cast<std::size_t>(rank)) : 0,
                             1.0f);
    for (int step = 0; step < 3; ++step) {
      op_options each;  // what every rank's call of the step shares
      each.comm = &comm;
      each.deadline = deadline_in(10s);
      each.chunk_bytes = 256;
      if (rank < 2) {
        ps_serve_options o;
        static_cast<op_options&>(o) = each;
        o.layout = layout;
        o.shard = shard;
        o.apply = [](troupe::span<float> s, troupe::span<const float> g) {
          for (std::size_t i = 0; i < s.size(); ++i) s[i] -= 0.5f * g[i];
        };
        ps_serve(o);
      } else {
        std::vector<float> gradient(layout.count);
        for (std::size_t i = 0; i < gradient.size(); ++i)
          gradient[i] = static_cast<float>(rank) * static_cast<float>(i % 3);
        ps_push_options push;
        static_cast<op_options&>(push) = each;
        push.layout = layout;
        push.gradient = gradient;
        ps_push(push);
        ps_pull_options pull;
        static_cast<op_options&>(pull) = each;
        pull.layout = layout;
        pulled[static_cast<std::size_t>(rank)].assign(layout.count, 0.0f);
        pull.params = pulled[static_cast<std::size_t>(rank)];
        ps_pull(pull);
      }
    }
  });
  for (int rank = 0; rank < size; ++rank) CHECK(errors[static_cast<std::size_t>(rank)] == "");
  // After 3 steps: 1 - 3 * 0.5 * (2 + 3 + 4) * (i % 3).
  std::size_t bad = 0;
  for (int w = 2; w < size; ++w)
    for (std::size_t i = 0; i < layout.count; ++i)
      bad += pulled[static_cast<std::size_t>(w)][i] != 1.0f - 13.5f * static_cast<float>(i % 3);
  CHECK(bad == 0);
}

TEST_CASE("add_into and max_into read a source that is not aligned for float") {
  // A received frame may start anywhere in its buffer: put the floats one byte past alignment.
  const std::vector<float> values{1.5f, -2.0f, 4.0f, 0.25f, 8.0f};
  std::vector<std::byte> raw(values.size() * sizeof(float) + 1);
  std::memcpy(raw.data() + 1, values.data(), values.size() * sizeof(float));
  std::vector<float> sum{1.0f, 1.0f, 1.0f, 1.0f, 1.0f};
  troupe::collectives::add_into(sum.data(), raw.data() + 1, values.size());
  CHECK(sum == std::vector<float>{2.5f, -1.0f, 5.0f, 1.25f, 9.0f});
  std::vector<float> mx{2.0f, -3.0f, 5.0f, 0.0f, 8.0f};
  troupe::collectives::max_into(mx.data(), raw.data() + 1, values.size());
  CHECK(mx == std::vector<float>{2.0f, -2.0f, 5.0f, 0.25f, 8.0f});
}

TEST_CASE("allreduce_wire_bytes follows the form allreduce picks") {
  // One step among a full mesh: every rank sends its buffer to the n - 1 others.
  CHECK(allreduce_wire_bytes(4096, 4) == 12u * 4096);
  // Two steps or the ring: 2 (n - 1) buffers in all.
  CHECK(allreduce_wire_bytes(1u << 20, 4) == 6u << 20);
  CHECK(allreduce_wire_bytes(65536, 4) == 6u * 65536);
  // Above full_mesh_ranks only ring neighbours are linked: the ring, whatever the size.
  CHECK(allreduce_wire_bytes(4096, full_mesh_ranks + 1) == 2u * full_mesh_ranks * 4096);
  allreduce_options ring_only;
  ring_only.one_step_bytes = 0;
  CHECK(allreduce_wire_bytes(4096, 4, ring_only) == 6u * 4096);
}
