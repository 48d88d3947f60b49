#include "actors/observe/job_timeline.hpp"

#include <doctest/doctest.h>

using troupe::actors::job_timeline;

namespace {
troupe::series_point at(std::int64_t step) {
  troupe::series_point p;
  p.step = step;
  p.loss = 1.0 / static_cast<double>(step + 1);
  return p;
}
}  // namespace

TEST_CASE("the series keeps every step until it is full, then thins evenly") {
  job_timeline t(8);
  for (std::int64_t s = 1; s <= 7; ++s) t.step(at(s));
  CHECK(t.series().points.size() == 7);
  CHECK(t.series().every == 1);
  t.step(at(8));  // full: every other point goes
  CHECK(t.series().every == 2);
  REQUIRE(t.series().points.size() == 4);
  CHECK(t.series().points.front().step == 2);
  CHECK(t.series().points.back().step == 8);
  for (std::int64_t s = 9; s <= 1001; ++s) t.step(at(s));
  CHECK(t.series().points.size() < 8);
  for (const auto& p : t.series().points) CHECK(p.step % t.series().every == 0);
  CHECK(t.series().points.back().step != 1001);
  // The last step is there at the end even when thinning skipped it, once.
  t.finish();
  CHECK(t.series().points.back().step == 1001);
  const auto n = t.series().points.size();
  t.finish();
  CHECK(t.series().points.size() == n);
}

TEST_CASE("events are kept in order up to the bound; the rest are counted") {
  job_timeline t(8, 3);
  for (int i = 0; i < 5; ++i)
    t.event({0.1 * i, i, "failure", "worker cpu/" + std::to_string(i), {}});
  REQUIRE(t.events().size() == 3);
  CHECK(t.events()[2].detail == "worker cpu/2");
  CHECK(t.dropped() == 2);
}
