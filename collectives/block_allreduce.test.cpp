#include "collectives/block_allreduce.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <random>
#include <vector>

#include "collectives/errors.hpp"
#include "collectives/inproc/inproc_link.hpp"
#include "collectives/inproc/reduce_kernel.hpp"
#include "collectives/testing.hpp"

using namespace troupe::collectives;
using namespace std::chrono_literals;

namespace {

// One step's block sums: values of mixed magnitudes, whose float sum depends on the order.
std::vector<std::vector<float>> step_blocks(std::size_t blocks, std::size_t count) {
  std::mt19937 gen{static_cast<unsigned>(blocks * 131 + count)};
  std::uniform_real_distribution<float> dist{-1.0f, 1.0f};
  std::vector<std::vector<float>> out(blocks, std::vector<float>(count));
  for (std::size_t b = 0; b < blocks; ++b)
    for (auto& x : out[b]) x = dist(gen) * static_cast<float>(1 << (b % 4) * 6);
  return out;
}

// Block b goes to rank owner[b] (the first owner.size() blocks of a step are dealt).
std::vector<int> deal(std::size_t blocks, int ranks, unsigned seed) {
  std::mt19937 gen{seed};
  std::uniform_int_distribution<int> pick{0, ranks - 1};
  std::vector<int> owner(blocks);
  for (auto& o : owner) o = pick(gen);
  return owner;
}

block_allreduce_options options_for(communicator& comm, const std::vector<std::vector<float>>& all,
                                    const std::vector<int>& owner,
                                    const std::vector<std::uint64_t>& samples,
                                    std::vector<float>& out) {
  block_allreduce_options o;
  o.comm = &comm;
  o.job = 3;
  o.generation = 1;
  o.deadline = troupe::steady::now() + 10s;
  o.count = out.size();
  o.out = troupe::span<float>{out.data(), out.size()};
  // A rank's blocks in any order: the result must not care.
  for (std::size_t b = owner.size(); b-- > 0;)
    if (owner[b] == comm.rank()) {
      o.blocks.push_back(all[b].data());
      o.index.push_back(static_cast<std::uint32_t>(b));
      o.samples += samples[b];
    }
  return o;
}

}  // namespace

TEST_CASE("block allreduce: the blocks in block order, the same bits however they are dealt") {
  const std::size_t blocks = 9;
  for (std::size_t count : {1, 7, 1001}) {
    const auto all = step_blocks(blocks, count);
    std::vector<std::uint64_t> samples(blocks, 32);
    samples.back() = 17;  // the step's last block is short
    std::uint64_t total = 0;
    for (auto s : samples) total += s;
    // The parameter server's bits: every block in order, divided by the step's samples.
    std::vector<const float*> ins;
    for (const auto& b : all) ins.push_back(b.data());
    std::vector<float> expected(count);
    reduce_spec spec;
    spec.divide = true;
    spec.divisor = static_cast<float>(total);
    reduce_into(expected.data(), ins.data(), ins.size(), 0, count, spec);
    for (int ranks = 1; ranks <= 5; ++ranks)
      for (unsigned seed : {1u, 2u, 3u}) {
        CAPTURE(count);
        CAPTURE(ranks);
        CAPTURE(seed);
        const auto owner = deal(blocks, ranks, seed * 17 + static_cast<unsigned>(ranks));
        inproc_hub hub{ranks};
        std::vector<std::size_t> differ(static_cast<std::size_t>(ranks), 0);
        std::vector<block_allreduce_result> results(static_cast<std::size_t>(ranks));
        const auto errors = testing::run_ranks(ranks, [&](int rank) {
          communicator comm = hub.connect(rank);
          std::vector<float> out(count, -1.0f);
          const auto r = static_cast<std::size_t>(rank);
          results[r] = block_allreduce(options_for(comm, all, owner, samples, out));
          differ[r] = std::memcmp(out.data(), expected.data(), count * sizeof(float)) != 0;
        });
        CHECK(testing::first_failure(errors, differ) == "");
        for (const auto& r : results) {
          CHECK(r.blocks == blocks);
          CHECK(r.total_samples == total);
        }
      }
  }
}

TEST_CASE("block allreduce: a block two ranks hold, or one past the step's, fails every rank") {
  const auto all = step_blocks(4, 10);
  const std::vector<std::uint64_t> samples(4, 8);
  for (const std::vector<int>& owner : {std::vector<int>{0, 1, 1, 2}, std::vector<int>{0, 2}}) {
    inproc_hub hub{3};
    const auto errors = testing::run_ranks(3, [&](int rank) {
      communicator comm = hub.connect(rank);
      std::vector<float> out(10);
      auto o = options_for(comm, all, owner, samples, out);
      if (owner.size() == 4 && rank == 2) {  // rank 2 claims block 1 as well
        o.blocks.push_back(all[1].data());
        o.index.push_back(1);
      }
      if (owner.size() == 2 && rank == 2) o.index.back() = 3;  // rank 2 names block 3 of 2
      block_allreduce(o);
    });
    // The first rank to hold every list refuses the step; one that was still waiting may hear
    // of it first as that rank's closed link.
    int named = 0;
    for (const auto& e : errors) {
      CAPTURE(e);
      CHECK(!e.empty());
      named += e.find("holds block") != std::string::npos;
      CHECK((e.find("holds block") != std::string::npos || e.find("closed") != std::string::npos));
    }
    CHECK(named >= 1);
  }
}
