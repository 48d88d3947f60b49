// The job's per-step statistics: a re-planned slice (a second answer from one rank in a step,
// after another member failed) adds to that rank's samples and seconds, and the step gives the
// noise-scale estimate no point, since |G|^2 of the rank's two slices together is not known.
#include "actors/observe/job_stats.hpp"

#include <doctest/doctest.h>

#include "core/error.hpp"
#include "policies/imbalance.hpp"

using namespace troupe::actors;

namespace {

// Points of y = |G_b|^2 = g2 + tr / b for known g2 (|G|^2) and tr (tr Sigma): B_noise = tr / g2.
void exact_step(job_stats& s, double g2, double tr) {
  s.begin_step(2);
  s.on_worker(0, 100, g2 + tr / 100, 0.10);
  s.on_worker(1, 50, g2 + tr / 50, 0.05);
  s.end_step(g2 + tr / 150);
}

}  // namespace

TEST_CASE("a re-planned slice adds to its rank's time and gives no noise point") {
  job_stats s(0.5);
  for (int i = 0; i < 6; ++i) exact_step(s, 2.0, 400.0);
  REQUIRE(s.noise_scale());
  const double before = *s.noise_scale();
  CHECK(before == doctest::Approx(200.0).epsilon(0.01));

  // Rank 1 computes a second slice of 30 samples; its |G_b|^2 is far off the line, as a slice
  // from another part of the batch may be. The estimate must not move.
  s.begin_step(2);
  s.on_worker(0, 100, 2.0 + 4.0, 0.10);
  s.on_worker(1, 50, 2.0 + 8.0, 0.05);
  s.on_worker(1, 30, 500.0, 0.03);
  s.end_step(2.0 + 400.0 / 180);
  CHECK(*s.noise_scale() == doctest::Approx(before).epsilon(1e-12));
  // Rank 1 worked 0.05 + 0.03 s in the step: the imbalance uses the total.
  CHECK(s.step_imbalance() == doctest::Approx(troupe::policies::imbalance_index({0.10, 0.08})));

  // The next ordinary step counts again.
  exact_step(s, 4.0, 400.0);
  CHECK(*s.noise_scale() != doctest::Approx(before).epsilon(1e-6));
}

TEST_CASE("the reduced squared norm sums the buffers element-wise in rank order") {
  // Sizes around the kernel's blocks: a tail of fewer than 8, a block and a bit, several.
  for (const std::size_t n : {std::size_t{5}, std::size_t{4099}, std::size_t{12345}}) {
    CAPTURE(n);
    std::vector<std::shared_ptr<const std::vector<float>>> bufs;
    for (int w = 0; w < 3; ++w) {
      auto b = std::make_shared<std::vector<float>>(n);
      for (std::size_t i = 0; i < n; ++i)
        (*b)[i] = static_cast<float>((static_cast<int>(i * 7 + w * 13) % 23) - 11) * 0.125f;
      bufs.push_back(std::move(b));
    }
    bufs.insert(bufs.begin() + 1, nullptr);  // skipped
    double expect = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      const double s = (*bufs[0])[i] + (*bufs[2])[i] + (*bufs[3])[i];
      expect += s * s;
    }
    // Eighths sum exactly in float: only the partials' order may round.
    CHECK(reduced_sq_norm(bufs, 4.0) == doctest::Approx(expect / 16.0).epsilon(1e-6));
    CHECK(reduced_sq_norm(bufs, 0.0) == 0.0);
  }
  std::vector<std::shared_ptr<const std::vector<float>>> odd{
      std::make_shared<std::vector<float>>(4), std::make_shared<std::vector<float>>(5)};
  CHECK_THROWS_AS(reduced_sq_norm(odd, 1.0), troupe::runtime_failure);
}
