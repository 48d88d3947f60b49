// Identical devices (one group) get one probed speed, the median of theirs; a group that is not
// pooled, and other groups, keep their own figures.
#include "policies/probe_pool.hpp"

#include <doctest/doctest.h>

#include "core/error.hpp"

using troupe::policies::pool_probes_by_group;

TEST_CASE("a group's members get the median of their probes") {
  // Two cpu devices probed 97 vs 127 us a sample apart (the noise of one probe), a slow one.
  const auto out =
      pool_probes_by_group({97e-6, 127e-6, 300e-6}, {"cpu", "cpu", "slow"}, {true, true, true});
  REQUIRE(out.size() == 3);
  CHECK(out[0] == doctest::Approx(112e-6));
  CHECK(out[1] == out[0]);
  CHECK(out[2] == doctest::Approx(300e-6));
}

TEST_CASE("three members: the middle one, so one outlier does not move the group") {
  const auto out =
      pool_probes_by_group({10.0, 11.0, 40.0, 5.0}, {"a", "a", "a", "b"}, {true, true, true, true});
  CHECK(out[0] == 11.0);
  CHECK(out[1] == 11.0);
  CHECK(out[2] == 11.0);
  CHECK(out[3] == 5.0);
}

TEST_CASE("members not pooled keep their own figure") {
  const auto out = pool_probes_by_group({1.0, 3.0}, {"gpu", "gpu"}, {false, false});
  CHECK(out[0] == 1.0);
  CHECK(out[1] == 3.0);
  CHECK_THROWS_AS(pool_probes_by_group({1.0}, {"a", "b"}, {true}), troupe::runtime_failure);
}
