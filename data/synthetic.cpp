#include "data/synthetic.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "core/error.hpp"

namespace troupe::data {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw input_error(what);
}

}  // namespace

linear_regression_set make_linear_regression(std::size_t n, std::size_t d, double noise_std,
                                             rng& r) {
  require(n > 0 && d > 0, "make_linear_regression: n and d must be positive");
  require(noise_std >= 0, "make_linear_regression: noise_std must be >= 0");
  linear_regression_set s;
  s.weights.resize(d);
  for (auto& w : s.weights) w = static_cast<float>(r.normal());
  s.bias = static_cast<float>(r.normal());
  dataset& ds = s.data;
  ds.name = "linear-regression";
  ds.sample_shape = {d};
  ds.n = n;
  ds.x.resize(n * d);
  ds.targets.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    double y = s.bias;
    for (std::size_t j = 0; j < d; ++j) {
      const auto v = static_cast<float>(r.normal());
      ds.x[i * d + j] = v;
      y += static_cast<double>(v) * s.weights[j];
    }
    ds.targets[i] = static_cast<float>(y + noise_std * r.normal());
  }
  return s;
}

blobs_set make_gaussian_blobs(std::size_t n, std::size_t classes, std::size_t d, double spread,
                              rng& r) {
  require(n > 0 && d > 0 && classes > 0, "make_gaussian_blobs: n, classes, d must be positive");
  require(spread >= 0, "make_gaussian_blobs: spread must be >= 0");
  blobs_set s;
  s.centers.resize(classes * d);
  for (auto& c : s.centers) c = r.uniform_float(-10.0f, 10.0f);
  dataset& ds = s.data;
  ds.name = "gaussian-blobs";
  ds.sample_shape = {d};
  ds.n = n;
  ds.classes = classes;
  ds.x.resize(n * d);
  ds.labels.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t c = i % classes;
    ds.labels[i] = static_cast<std::int32_t>(c);
    for (std::size_t j = 0; j < d; ++j) {
      ds.x[i * d + j] = static_cast<float>(s.centers[c * d + j] + spread * r.normal());
    }
  }
  return s;
}

double blob_margin(const float* x, std::size_t label, const std::vector<float>& centers,
                   std::size_t d) {
  const std::size_t classes = centers.size() / d;
  const float* own = centers.data() + label * d;
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t o = 0; o < classes; ++o) {
    if (o == label) continue;
    const float* other = centers.data() + o * d;
    // Signed distance from the bisector of (own, other), positive on own's side.
    double dot = 0, norm2 = 0;
    for (std::size_t j = 0; j < d; ++j) {
      const double u = double{own[j]} - other[j];
      const double mid = 0.5 * (double{own[j]} + other[j]);
      dot += (x[j] - mid) * u;
      norm2 += u * u;
    }
    best = std::min(best, dot / std::sqrt(norm2));
  }
  return best;
}

hard_easy_set make_hard_easy_blobs(const hard_easy_options& o, rng& r) {
  require(o.n > 0 && o.d > 0, "make_hard_easy_blobs: n and d must be positive");
  require(o.classes >= 2, "make_hard_easy_blobs: need at least 2 classes");
  require(o.hard_fraction >= 0 && o.hard_fraction <= 1,
          "make_hard_easy_blobs: hard_fraction must be in [0, 1]");
  require(o.separation > 0 && o.spread > 0 && o.hard_margin > 0,
          "make_hard_easy_blobs: separation, spread and hard_margin must be positive");
  require(o.hard_margin < o.separation / 2,
          "make_hard_easy_blobs: hard_margin must be below separation / 2");
  const std::size_t k = o.classes, d = o.d;
  hard_easy_set s;
  s.centers.assign(k * d, 0.0f);
  const double pi = std::acos(-1.0);
  // A circle keeps all neighbouring pairs equally far apart, so difficulty is the same per class.
  const double radius = k == 2 ? o.separation / 2 : o.separation / (2 * std::sin(pi / k));
  for (std::size_t c = 0; c < k; ++c) {
    if (d == 1) {
      s.centers[c] = static_cast<float>(o.separation * (static_cast<double>(c) - (k - 1) / 2.0));
    } else {
      s.centers[c * d] = static_cast<float>(radius * std::cos(2 * pi * c / k));
      s.centers[c * d + 1] = static_cast<float>(radius * std::sin(2 * pi * c / k));
    }
  }

  const auto hard_count = static_cast<std::size_t>(std::llround(o.hard_fraction * o.n));
  std::vector<std::size_t> order(o.n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  r.shuffle(order);
  s.hard.assign(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(hard_count));
  std::sort(s.hard.begin(), s.hard.end());
  s.is_hard.assign(o.n, false);
  for (auto i : s.hard) s.is_hard[i] = true;

  dataset& ds = s.data;
  ds.name = "hard-easy-blobs";
  ds.sample_shape = {d};
  ds.n = o.n;
  ds.classes = k;
  ds.x.resize(o.n * d);
  ds.labels.resize(o.n);
  std::vector<float> x(d);
  // Rejection sampling keeps the margin promise exactly; acceptance is high for sane settings,
  // and the cap turns impossible settings into an error instead of a hang.
  constexpr int max_tries = 10000;
  for (std::size_t i = 0; i < o.n; ++i) {
    const std::size_t y = i % k;
    ds.labels[i] = static_cast<std::int32_t>(y);
    const float* own = s.centers.data() + y * d;
    int tries = 0;
    for (;; ++tries) {
      require(tries < max_tries,
              "make_hard_easy_blobs: cannot place a sample with these spread/margin settings");
      if (!s.is_hard[i]) {
        for (std::size_t j = 0; j < d; ++j)
          x[j] = static_cast<float>(own[j] + o.spread * r.normal());
        if (blob_margin(x.data(), y, s.centers, d) > o.hard_margin) break;
        continue;
      }
      // Near the bisector with a random neighbouring class: a point on the segment between the
      // centres at distance t in (0, hard_margin] on our side, jittered along the boundary.
      // Only neighbours: the bisector with a farther class lies inside a neighbour's region.
      const bool on_line = d == 1;
      std::size_t other;
      if (k == 2) {
        other = 1 - y;
      } else if (on_line) {
        other = y == 0 ? 1 : y == k - 1 ? k - 2 : (r.below(2) ? y + 1 : y - 1);
      } else {
        other = r.below(2) ? (y + 1) % k : (y + k - 1) % k;
      }
      const float* oc = s.centers.data() + other * d;
      double norm2 = 0;
      for (std::size_t j = 0; j < d; ++j) norm2 += (double{own[j]} - oc[j]) * (own[j] - oc[j]);
      const double norm = std::sqrt(norm2);
      const double t = o.hard_margin * (1.0 - r.uniform());
      std::vector<double> jitter(d);
      double along = 0;
      for (std::size_t j = 0; j < d; ++j) {
        jitter[j] = o.spread * r.normal();
        along += jitter[j] * (own[j] - oc[j]) / norm;
      }
      for (std::size_t j = 0; j < d; ++j) {
        const double u = (own[j] - oc[j]) / norm;
        const double mid = 0.5 * (double{own[j]} + oc[j]);
        x[j] = static_cast<float>(mid + t * u + jitter[j] - along * u);
      }
      const double m = blob_margin(x.data(), y, s.centers, d);
      if (m > 0 && m <= o.hard_margin) break;
    }
    std::copy(x.begin(), x.end(), ds.x.begin() + static_cast<std::ptrdiff_t>(i * d));
  }
  return s;
}

}  // namespace troupe::data
