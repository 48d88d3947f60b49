#include "policies/imbalance.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "core/error.hpp"

using namespace troupe::policies;

TEST_CASE("coefficient of variation: table") {
  struct row {
    std::vector<double> v;
    double cv;
  };
  const row table[] = {
      {{1, 1, 1, 1}, 0.0},
      {{2, 4, 4, 4, 5, 5, 7, 9}, 2.0 / 5.0},  // the textbook population sigma = 2, mean = 5
      {{1, 3}, 0.5},
      {{0, 0, 0}, 0.0},
      {{0, 2}, 1.0},
      {{5}, 0.0},
      {{1e9 + 1, 1e9 - 1}, 1e-9},  // two-pass: no cancellation
  };
  for (const auto& r : table) CHECK(coefficient_of_variation(r.v) == doctest::Approx(r.cv));
}

TEST_CASE("imbalance of step times and of busy fractions") {
  // Worker 3 is twice as slow: the others wait for it.
  const std::vector<double> compute{0.10, 0.10, 0.10, 0.20};
  CHECK(imbalance_index(compute) == doctest::Approx(std::sqrt(3.0) / 5.0));
  CHECK(straggler_ratio(compute) == doctest::Approx(0.20 / 0.125));
  const auto busy = busy_fractions(compute, 0.25);
  CHECK(busy == std::vector<double>{0.4, 0.4, 0.4, 0.8});
  CHECK(busy_imbalance(busy) == doctest::Approx(std::sqrt(3.0) / 5.0));
  CHECK(busy_fractions({0.3}, 0.2)[0] == 1.0);  // clamped: clocks disagree slightly
  CHECK(straggler_ratio({0.5, 0.5}) == 1.0);
}

TEST_CASE("imbalance: invalid input") {
  CHECK_THROWS_AS(coefficient_of_variation({}), troupe::input_error);
  CHECK_THROWS_AS(coefficient_of_variation({1, -1}), troupe::input_error);
  CHECK_THROWS_AS(coefficient_of_variation({1, NAN}), troupe::input_error);
  CHECK_THROWS_AS(busy_fractions({1}, 0.0), troupe::input_error);
  CHECK_THROWS_AS(straggler_ratio({}), troupe::input_error);
}
