#include "data/synthetic.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"

using namespace troupe::data;

namespace {

// Solves A x = b (A is k x k, row-major) by Gaussian elimination with partial pivoting.
std::vector<double> solve(std::vector<double> a, std::vector<double> b) {
  const std::size_t k = b.size();
  for (std::size_t c = 0; c < k; ++c) {
    std::size_t p = c;
    for (std::size_t r = c + 1; r < k; ++r)
      if (std::abs(a[r * k + c]) > std::abs(a[p * k + c])) p = r;
    for (std::size_t j = 0; j < k; ++j) std::swap(a[c * k + j], a[p * k + j]);
    std::swap(b[c], b[p]);
    for (std::size_t r = c + 1; r < k; ++r) {
      const double f = a[r * k + c] / a[c * k + c];
      for (std::size_t j = c; j < k; ++j) a[r * k + j] -= f * a[c * k + j];
      b[r] -= f * b[c];
    }
  }
  std::vector<double> x(k);
  for (std::size_t c = k; c-- > 0;) {
    double s = b[c];
    for (std::size_t j = c + 1; j < k; ++j) s -= a[c * k + j] * x[j];
    x[c] = s / a[c * k + c];
  }
  return x;
}

}  // namespace

TEST_CASE("linear regression: feature moments, noise level and least squares recover w") {
  troupe::rng r{5};
  const std::size_t n = 20000, d = 4;
  const double noise = 0.3;
  const auto s = make_linear_regression(n, d, noise, r);
  REQUIRE(s.data.n == n);
  REQUIRE(s.data.x.size() == n * d);
  REQUIRE(s.data.targets.size() == n);
  CHECK(s.data.sample_shape == std::vector<std::size_t>{d});
  CHECK_FALSE(s.data.is_classification());

  // x ~ N(0, 1): sample mean within ~5 standard errors, variance within a few percent.
  for (std::size_t j = 0; j < d; ++j) {
    double m = 0, v = 0;
    for (std::size_t i = 0; i < n; ++i) m += s.data.x[i * d + j];
    m /= n;
    for (std::size_t i = 0; i < n; ++i) v += (s.data.x[i * d + j] - m) * (s.data.x[i * d + j] - m);
    v /= n - 1;
    CHECK(std::abs(m) < 5 / std::sqrt(double(n)));
    CHECK(v == doctest::Approx(1.0).epsilon(0.05));
  }
  // Residuals against the true model have the noise variance.
  double rv = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double y = s.bias;
    for (std::size_t j = 0; j < d; ++j) y += s.weights[j] * s.data.x[i * d + j];
    rv += (s.data.targets[i] - y) * (s.data.targets[i] - y);
  }
  CHECK(rv / n == doctest::Approx(noise * noise).epsilon(0.05));

  // Normal equations over [x, 1] recover (w, b) to within a few standard errors.
  const std::size_t k = d + 1;
  std::vector<double> ata(k * k, 0), atb(k, 0);
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> row(s.data.row(i), s.data.row(i) + d);
    row.push_back(1);
    for (std::size_t a = 0; a < k; ++a) {
      atb[a] += row[a] * s.data.targets[i];
      for (std::size_t b = 0; b < k; ++b) ata[a * k + b] += row[a] * row[b];
    }
  }
  const auto fit = solve(ata, atb);
  for (std::size_t j = 0; j < d; ++j) CHECK(std::abs(fit[j] - s.weights[j]) < 0.02);
  CHECK(std::abs(fit[d] - s.bias) < 0.02);
}

TEST_CASE("gaussian blobs: balanced labels, class means at the centres, within-class spread") {
  troupe::rng r{9};
  const std::size_t n = 30000, k = 3, d = 2;
  const double spread = 0.5;
  const auto s = make_gaussian_blobs(n, k, d, spread, r);
  REQUIRE(s.centers.size() == k * d);
  CHECK(s.data.classes == k);
  std::vector<double> sum(k * d, 0), sq(k * d, 0);
  std::vector<std::size_t> count(k, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<std::size_t>(s.data.labels[i]);
    ++count[c];
    for (std::size_t j = 0; j < d; ++j) {
      const double dx = s.data.x[i * d + j] - s.centers[c * d + j];
      sum[c * d + j] += dx;
      sq[c * d + j] += dx * dx;
    }
  }
  for (std::size_t c = 0; c < k; ++c) {
    CHECK(count[c] == n / k);
    for (std::size_t j = 0; j < d; ++j) {
      CHECK(std::abs(sum[c * d + j] / count[c]) < 5 * spread / std::sqrt(double(count[c])));
      CHECK(sq[c * d + j] / count[c] == doctest::Approx(spread * spread).epsilon(0.05));
    }
  }
}

TEST_CASE("hard/easy blobs: the hard indices and only they sit near a boundary") {
  for (std::size_t d : {1, 2, 5}) {
    for (std::size_t k : {2, 3, 5}) {
      CAPTURE(d);
      CAPTURE(k);
      troupe::rng r{100 + d * 10 + k};
      hard_easy_options o;
      o.n = 2000;
      o.classes = k;
      o.d = d;
      o.hard_fraction = 0.1;
      const auto s = make_hard_easy_blobs(o, r);
      REQUIRE(s.data.n == o.n);
      CHECK(s.hard.size() == 200);
      CHECK(std::is_sorted(s.hard.begin(), s.hard.end()));
      CHECK(std::count(s.is_hard.begin(), s.is_hard.end(), true) == 200);
      for (auto i : s.hard) CHECK(s.is_hard[i]);
      for (std::size_t i = 0; i < o.n; ++i) {
        const auto y = static_cast<std::size_t>(s.data.labels[i]);
        REQUIRE(y == i % k);
        const double m = blob_margin(s.data.row(i), y, s.centers, d);
        REQUIRE(m > 0);  // no label noise: nearest centre is the labelled one
        if (s.is_hard[i]) {
          REQUIRE(m <= o.hard_margin);
        } else {
          REQUIRE(m > o.hard_margin);
        }
      }
    }
  }
  // Same seed, same set.
  troupe::rng a{1}, b{1};
  CHECK(make_hard_easy_blobs({}, a).data.x == make_hard_easy_blobs({}, b).data.x);
  hard_easy_options bad;
  bad.hard_margin = 3;  // beyond half the separation: impossible
  troupe::rng c{1};
  CHECK_THROWS_AS(make_hard_easy_blobs(bad, c), troupe::input_error);
}
