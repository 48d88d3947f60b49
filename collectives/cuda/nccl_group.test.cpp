// Built where CUDA was found. Without NCCL or a GPU (the CI box) it checks that a group fails
// with a clear error; with a GPU it runs a real 1-rank NCCL allreduce.
#include <doctest/doctest.h>

#ifdef TROUPE_HAVE_CUDA
#include <chrono>

#include "collectives/cuda/nccl_group.hpp"
#include "collectives/memory_store.hpp"

using namespace troupe::collectives;
using namespace std::chrono_literals;

TEST_CASE("NCCL group: a clear error without a GPU, a correct allreduce with one") {
  std::string why;
  if (!nccl_group::available(&why)) {
    MESSAGE("NCCL not usable here: " << why);
    memory_store store;
    nccl_group_options o;
    o.rendezvous = &store;
    o.deadline = deadline_in(1s);
    CHECK_THROWS_AS(nccl_group{o}, troupe::runtime_failure);
    return;
  }
  CHECK(nccl_group::smoke_test(0, 1009) == "");
}
#else
// Without nvcc the NCCL backend is not compiled: nothing to test, and doctest says so (a skipped
// case, not a passing one).
TEST_CASE("NCCL group: skipped, the CUDA sources are not built without nvcc" *
          doctest::skip(true)) {}
#endif
