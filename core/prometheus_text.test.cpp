#include "core/prometheus_text.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

using troupe::prometheus_text;

TEST_CASE("a family, its samples, escaped label values and exact numbers") {
  prometheus_text out;
  out.family("troupe_loss", "gauge", "The last step's loss.");
  out.sample("troupe_loss", {{"job", "a\"b\\c\nd"}}, 0.1);
  out.sample("troupe_loss", {}, 1e300);
  out.sample("troupe_loss", {{"job", "x"}, {"group", "cpu"}}, INFINITY);
  out.sample("troupe_loss", {}, NAN);
  CHECK(out.text() ==
        "# HELP troupe_loss The last step's loss.\n# TYPE troupe_loss gauge\n"
        "troupe_loss{job=\"a\\\"b\\\\c\\nd\"} 0.1\n"
        "troupe_loss 1e+300\n"
        "troupe_loss{job=\"x\",group=\"cpu\"} +Inf\n"
        "troupe_loss NaN\n");
}

TEST_CASE("a histogram's buckets are cumulative and end with +Inf, then _sum and _count") {
  prometheus_text out;
  out.family("troupe_recovery_seconds", "histogram", "Recovery.");
  out.histogram("troupe_recovery_seconds", {{"job", "j"}}, {0.01, 0.1, 1}, {0.004, 0.2, 0.05, 5});
  CHECK(out.text() ==
        "# HELP troupe_recovery_seconds Recovery.\n# TYPE troupe_recovery_seconds histogram\n"
        "troupe_recovery_seconds_bucket{job=\"j\",le=\"0.01\"} 1\n"
        "troupe_recovery_seconds_bucket{job=\"j\",le=\"0.1\"} 2\n"
        "troupe_recovery_seconds_bucket{job=\"j\",le=\"1\"} 3\n"
        "troupe_recovery_seconds_bucket{job=\"j\",le=\"+Inf\"} 4\n"
        "troupe_recovery_seconds_sum{job=\"j\"} 5.254\n"
        "troupe_recovery_seconds_count{job=\"j\"} 4\n");
}

TEST_CASE("a histogram from kept counts reads as one from its observations") {
  prometheus_text a, b;
  a.histogram("troupe_h", {}, {0.01, 0.1}, {0.005, 0.05, 0.05, 7});
  b.histogram_counts("troupe_h", {}, {0.01, 0.1}, {1, 2, 1}, 7.105);
  CHECK(a.text() == b.text());
}

TEST_CASE("bad names and types are bugs, refused") {
  prometheus_text out;
  CHECK_THROWS_AS(out.family("1troupe", "gauge", "x"), std::logic_error);
  CHECK_THROWS_AS(out.family("troupe_x", "summary", "x"), std::logic_error);
  CHECK_THROWS_AS(out.sample("troupe-x", {}, 1), std::logic_error);
  CHECK_THROWS_AS(out.sample("troupe_x", {{"bad:label", "v"}}, 1), std::logic_error);
  CHECK_THROWS_AS(out.histogram_counts("troupe_h", {}, {1, 2}, {1, 2}, 0), std::logic_error);
  CHECK(out.text().empty());
}
