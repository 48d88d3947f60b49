#pragma once
// Test helpers: central-difference gradient checks in float. Losses are accumulated in double and
// kept O(1) on tiny shapes, so the difference quotient is accurate to about 1e-4; tolerances are
// set an order of magnitude above that and far below any real gradient error.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "core/rng.hpp"

namespace troupe::models::testing {

inline std::vector<float> random_vector(rng& r, std::size_t n, float lo = -1.0f, float hi = 1.0f) {
  std::vector<float> v(n);
  for (auto& x : v) x = r.uniform_float(lo, hi);
  return v;
}

// Values with |v| >= gap, so a ReLU kink or a max tie is never within a finite-difference step.
inline std::vector<float> away_from_zero(rng& r, std::size_t n, float gap = 0.05f) {
  std::vector<float> v(n);
  for (auto& x : v) {
    const float m = r.uniform_float(gap, 1.0f);
    x = r.uniform() < 0.5 ? -m : m;
  }
  return v;
}

// Checks analytic[i] against (f(x + h e_i) - f(x - h e_i)) / 2h for every i, perturbing x in place
// (restored afterwards). Returns the number of mismatches so callers can CHECK it is zero.
// A coordinate whose two one-sided slopes disagree by more than the tolerance has a ReLU kink or
// a max-pool switch inside [x - h, x + h], where no difference quotient is meaningful: it is
// skipped (at most a tenth of them). A wrong analytic gradient cannot hide this way, because the
// one-sided slopes do not depend on it.
inline int gradcheck(const std::string& what, std::vector<float>& x,
                     const std::vector<float>& analytic, const std::function<double()>& f,
                     float h = 1e-3f, double atol = 2e-3, double rtol = 1e-2) {
  REQUIRE(x.size() == analytic.size());
  int bad = 0;
  std::size_t skipped = 0;
  const double mid = f();
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float orig = x[i];
    x[i] = orig + h;
    const double up = f();
    x[i] = orig - h;
    const double down = f();
    x[i] = orig;
    const double hd = static_cast<double>(h);
    const double numeric = (up - down) / (2.0 * hd);
    const double tol = atol + rtol * std::abs(numeric);
    if (std::abs((up - mid) / hd - (mid - down) / hd) > tol) {
      ++skipped;
      continue;
    }
    if (std::abs(numeric - analytic[i]) > tol) {
      ++bad;
      MESSAGE(what << "[" << i << "]: analytic " << analytic[i] << " numeric " << numeric);
    }
  }
  f();  // leave any state f writes (activations) as at x
  CHECK_MESSAGE(skipped * 10 <= x.size(),
                what << ": " << skipped << " of " << x.size() << " coordinates sit on a kink");
  return bad;
}

// Smallest |v|: how far pre-activations are from a ReLU kink.
inline float min_abs(const std::vector<float>& v) {
  float m = INFINITY;
  for (float x : v) m = std::min(m, std::abs(x));
  return m;
}

inline double dot(const float* a, const std::vector<float>& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < b.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

}  // namespace troupe::models::testing
