// share_allocator's core (share_book) with fake step metrics: joins, windows, and decisions that
// move the share toward the job with the higher goodput, with the floor and damping.
#include "actors/tasks/share_allocator.hpp"

#include <doctest/doctest.h>

using troupe::actors::share_allocator_options;
using troupe::actors::share_book;

namespace {

troupe::msg::step_metrics step(const std::string& name, troupe::msg::job_id job,
                               std::int64_t samples, double seconds, double b_noise = 0.0) {
  troupe::msg::step_metrics m;
  m.name = name;
  m.job = job;
  m.samples = samples;
  m.step_seconds = seconds;
  m.noise_scale = b_noise;
  return m;
}

double share_of(const share_book& b, const std::string& n) {
  return b.members().at(n).share;
}

}  // namespace

TEST_CASE("joins split by weight; leaving renormalises the others") {
  share_book b;
  b.join("a", 1, 3.0, 64);
  CHECK(share_of(b, "a") == doctest::Approx(1.0));
  b.join("b", 2, 1.0, 64);
  CHECK(share_of(b, "a") == doctest::Approx(0.75));
  CHECK(share_of(b, "b") == doctest::Approx(0.25));
  b.leave("a");
  CHECK(share_of(b, "b") == doctest::Approx(1.0));
}

TEST_CASE("the share moves toward the job with the higher goodput, damped, above the floor") {
  share_allocator_options o;
  o.policy.floor = 0.1;
  o.policy.damping = 0.5;
  share_book b(o);
  b.join("fast", 1, 1.0, 64);
  b.join("slow", 2, 1.0, 64);
  // No measurements yet: hold.
  CHECK_FALSE(b.decide().has_value());
  double prev = share_of(b, "fast");
  for (int round = 0; round < 6; ++round) {
    // Throughput at the current share: fast makes 4x the samples per unit of share.
    const double sf = share_of(b, "fast"), ss = share_of(b, "slow");
    for (int k = 0; k < 4; ++k) {
      b.observe(step("fast", 1, 64, 0.01 / sf));
      b.observe(step("slow", 2, 64, 0.04 / ss));
      b.observe(step("other", 9, 64, 0.001));  // not a member: ignored
    }
    const auto d = b.decide();
    if (!d) break;
    REQUIRE(d->names.size() == 2);
    CHECK(share_of(b, "fast") > prev);
    prev = share_of(b, "fast");
  }
  // Target 4:1 (gamma 1): 0.8 / 0.2; damping approaches it geometrically.
  CHECK(share_of(b, "fast") == doctest::Approx(0.8).epsilon(0.03));
  CHECK(share_of(b, "slow") >= 0.1);
  CHECK(share_of(b, "fast") + share_of(b, "slow") == doctest::Approx(1.0));
}

TEST_CASE("statistical efficiency from the noise scale weighs goodput") {
  share_book b;
  b.join("a", 1, 1.0, 256);
  b.join("b", 2, 1.0, 256);
  // Equal throughput, but a's batch is far beyond its noise scale (E = 17/272) while b's is
  // below it (E = 1001/1256): b makes more progress per sample and must gain share.
  for (int k = 0; k < 4; ++k) {
    b.observe(step("a", 1, 256, 0.01, 16.0));
    b.observe(step("b", 2, 256, 0.01, 1000.0));
  }
  REQUIRE(b.decide().has_value());
  CHECK(share_of(b, "b") > 0.6);
}

TEST_CASE("one member alone is never re-decided") {
  share_book b;
  b.join("a", 1, 1.0, 64);
  for (int k = 0; k < 4; ++k) b.observe(step("a", 1, 64, 0.01));
  CHECK_FALSE(b.decide().has_value());
}
