#include "core/rng.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

using troupe::rng;

TEST_CASE("same seed gives the same stream, different seeds differ") {
  rng a{42}, b{42}, c{43};
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next_u64();
    CHECK(x == b.next_u64());
    (void)c;
  }
  CHECK(rng{42}.next_u64() != rng{43}.next_u64());
}

TEST_CASE("below is in range and roughly uniform") {
  rng r{7};
  std::vector<int> counts(10, 0);
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    const auto v = r.below(10);
    REQUIRE(v < 10);
    ++counts[v];
  }
  for (int c : counts) CHECK(std::abs(c - n / 10) < 600);  // ~6 sigma
}

TEST_CASE("normal has mean 0 and variance 1") {
  rng r{9};
  const int n = 200000;
  double s = 0, s2 = 0;
  for (int i = 0; i < n; ++i) {
    const double x = r.normal();
    s += x;
    s2 += x * x;
  }
  CHECK(std::abs(s / n) < 0.01);
  CHECK(std::abs(s2 / n - 1.0) < 0.02);
}

TEST_CASE("shuffle is a permutation and state round-trips") {
  rng r{3};
  std::vector<int> v(1000);
  std::iota(v.begin(), v.end(), 0);
  auto saved = r.state();
  r.shuffle(v);
  CHECK(!std::is_sorted(v.begin(), v.end()));
  auto w = v;
  std::sort(w.begin(), w.end());
  for (int i = 0; i < 1000; ++i) CHECK(w[i] == i);
  rng r2{0};
  r2.set_state(saved);
  std::vector<int> u(1000);
  std::iota(u.begin(), u.end(), 0);
  r2.shuffle(u);
  CHECK(u == v);
}

TEST_CASE("forked streams are independent of each other") {
  rng base{11};
  CHECK(base.fork(0).next_u64() != base.fork(1).next_u64());
  CHECK(base.fork(5).next_u64() == base.fork(5).next_u64());
}
