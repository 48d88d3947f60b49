// priority_plan: each step's prioritised draw follows the reported losses, carries importance
// weights, and is reproducible from (seed, step, losses).
#include "actors/job/job_priority.hpp"

#include <doctest/doctest.h>

#include <algorithm>

using troupe::actors::priority_plan;

TEST_CASE("a step draws B indices with weights; alpha 0 is uniform with weight 1") {
  priority_plan flat(100, 32, {0.0, 1.0}, 7);
  const auto d = flat.draw(3);
  REQUIRE(d.size() == 32);
  REQUIRE(d.weights.size() == 32);
  for (std::size_t k = 0; k < d.size(); ++k) {
    CHECK(d[k] >= 0);
    CHECK(d[k] < 100);
    CHECK(d.weights[k] == doctest::Approx(1.0));
  }
  // Same (seed, step, losses): same draw.
  CHECK(static_cast<const std::vector<std::int64_t>&>(flat.draw(3)) ==
        static_cast<const std::vector<std::int64_t>&>(d));
}

TEST_CASE("high-loss samples are drawn more often and weighted down") {
  priority_plan p(100, 64, {1.0, 1.0}, 7);
  // Every sample seen at step 0: samples 0..9 have loss 1, the rest 0.01.
  std::vector<std::int64_t> idx(100);
  std::vector<float> loss(100);
  for (int i = 0; i < 100; ++i) {
    idx[i] = i;
    loss[i] = i < 10 ? 1.0f : 0.01f;
  }
  p.observe(0, idx, loss);
  std::size_t hard = 0, total = 0;
  float w_hard = 0, w_easy = 0;
  double wsum = 0;
  for (std::int64_t step = 1; step <= 20; ++step) {
    const auto d = p.draw(step);
    for (std::size_t k = 0; k < d.size(); ++k) {
      ++total;
      if (d[k] < 10) {
        ++hard;
        w_hard = d.weights[k];
      } else {
        w_easy = d.weights[k];
      }
      wsum += d.weights[k];
    }
  }
  // beta = 1: expectation 1 under P (the unbiased (N P)^-1), so the mean drawn weight is near 1.
  CHECK(wsum / static_cast<double>(total) == doctest::Approx(1.0).epsilon(0.25));
  // 10% of the samples carry ~90% of the score mass (a staleness boost of at most 2x aside).
  CHECK(static_cast<double>(hard) / static_cast<double>(total) > 0.7);
  CHECK(w_hard < w_easy);
}
