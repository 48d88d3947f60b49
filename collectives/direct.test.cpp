#include "collectives/direct.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <random>
#include <vector>

#include "collectives/allreduce.hpp"
#include "collectives/exact_sums_testing.hpp"
#include "collectives/inproc/inproc_link.hpp"
#include "collectives/testing.hpp"

using namespace troupe::collectives;
using namespace std::chrono_literals;
using namespace troupe::collectives::testing;

namespace {

enum class form { one_step, two_step };

allreduce_options direct_options(communicator& comm, std::vector<float>& data, form f) {
  allreduce_options o = allreduce_in(comm, data, 10s);
  o.one_step_bytes = f == form::one_step ? std::size_t{1} << 30 : 0;
  o.two_step_bytes = std::size_t{1} << 30;
  return o;
}

// Values whose sum depends on the order of the additions.
std::vector<float> noisy(int rank, std::size_t count) {
  std::mt19937 gen{static_cast<unsigned>(rank * 7919 + 1)};
  std::uniform_real_distribution<float> dist{-1.0f, 1.0f};
  std::vector<float> v(count);
  for (auto& x : v) x = dist(gen) * static_cast<float>(1 << (rank % 5) * 4);
  return v;
}

}  // namespace

TEST_CASE("one-step and two-step allreduce sum exactly for 1 to 8 ranks and awkward sizes") {
  for (form f : {form::one_step, form::two_step}) {
    CAPTURE(f == form::one_step);
    check_exact_sums<inproc_hub>(
        {0, 1, 2, 7, 13, 1009, 10007}, [&](inproc_hub& hub, int size, std::size_t count, int rank) {
          communicator comm = hub.connect(rank);
          std::vector<float> data = pattern_data(rank, count);
          allreduce(direct_options(comm, data, f));
          allreduce(direct_options(comm, data, f));  // a second op: the sum of sums
          std::size_t wrong = 0;
          for (std::size_t i = 0; i < count; ++i)
            wrong += data[i] != pattern_sum(size, i) * static_cast<float>(size);
          return wrong;
        });
  }
}

TEST_CASE("direct allreduce adds in rank order: every rank holds the same bits") {
  const int size = 5;
  const std::size_t count = 3001;
  // The reference: x0 + x1 + x2 + x3 + x4, left to right, per element.
  std::vector<float> expected = noisy(0, count);
  for (int r = 1; r < size; ++r) {
    const auto x = noisy(r, count);
    for (std::size_t i = 0; i < count; ++i) expected[i] += x[i];
  }
  for (form f : {form::one_step, form::two_step}) {
    inproc_hub hub{size};
    std::vector<std::size_t> differ(size, 0);
    auto errors = run_ranks(size, [&](int rank) {
      communicator comm = hub.connect(rank);
      std::vector<float> data = noisy(rank, count);
      allreduce(direct_options(comm, data, f));
      differ[static_cast<std::size_t>(rank)] =
          std::memcmp(data.data(), expected.data(), count * sizeof(float)) != 0;
    });
    CAPTURE(f == form::one_step);
    CHECK(testing::first_failure(errors, differ) == "");
  }
}

TEST_CASE("direct allreduce takes the maximum") {
  const int size = 4;
  for (form f : {form::one_step, form::two_step}) {
    inproc_hub hub{size};
    std::vector<std::size_t> bad(size, 0);
    auto errors = run_ranks(size, [&](int rank) {
      communicator comm = hub.connect(rank);
      std::vector<float> data(101);
      for (std::size_t i = 0; i < data.size(); ++i)
        data[i] = static_cast<float>((i + static_cast<std::size_t>(rank)) % size) - 2.0f;
      auto o = direct_options(comm, data, f);
      o.op = reduce_op::max;
      allreduce(o);
      for (float v : data) bad[static_cast<std::size_t>(rank)] += v != 1.0f;
    });
    CHECK(testing::first_failure(errors, bad) == "");
  }
}

TEST_CASE("direct allreduce: a closed member ends the wait on a silent one") {
  const int size = 3;
  for (form f : {form::one_step, form::two_step}) {
    inproc_hub hub{size};
    latch done{1};
    auto errors = run_ranks(size, [&](int rank) {
      communicator comm = hub.connect(rank);
      if (rank == 1) {
        comm.close();
        return;
      }
      if (rank == 0) {  // holds its links open and never joins
        done.wait_for(5s);
        return;
      }
      const count_down_on_exit release_rank0{done};
      std::vector<float> data(300, 1.0f);
      auto o = direct_options(comm, data, f);
      o.deadline = deadline_in(3s);
      allreduce(o);
    });
    CAPTURE(f == form::one_step);
    MESSAGE(errors[2]);
    CHECK(errors[2].find("rank 1") != std::string::npos);
    CHECK(errors[2].find("closed") != std::string::npos);
    CHECK(errors[2].find("timed out") == std::string::npos);
  }
}
