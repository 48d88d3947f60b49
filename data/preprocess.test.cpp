#include "data/preprocess.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "core/testing.hpp"

using namespace troupe::data;

namespace {

dataset random_images(std::size_t n, std::size_t c, std::size_t h, std::size_t w,
                      std::uint64_t seed) {
  troupe::rng r{seed};
  dataset d;
  d.name = "imgs";
  d.n = n;
  d.sample_shape = {c, h, w};
  d.x.resize(n * c * h * w);
  for (auto& v : d.x) v = r.uniform_float(0, 255);
  return d;
}

dataset features(std::size_t n, std::size_t f, std::uint64_t seed) {
  troupe::rng r{seed};
  dataset d;
  d.name = "feats";
  d.n = n;
  d.sample_shape = {f};
  d.x.resize(n * f);
  // Each feature with its own offset and scale, so per-feature statistics matter.
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < f; ++j)
      d.x[i * f + j] = static_cast<float>(100.0 * j + (j + 1) * 3.0 * r.normal());
  return d;
}

void column_moments(const dataset& d, std::size_t j, double& mean, double& sd) {
  const std::size_t f = d.features();
  mean = 0;
  for (std::size_t i = 0; i < d.n; ++i) mean += d.x[i * f + j];
  mean /= d.n;
  double v = 0;
  for (std::size_t i = 0; i < d.n; ++i) v += (d.x[i * f + j] - mean) * (d.x[i * f + j] - mean);
  sd = std::sqrt(v / d.n);
}

std::string error_of(const std::string& spec) {
  return troupe::testing::input_error_of([&] { make_step(spec); });
}

}  // namespace

TEST_CASE("standardize: train gets mean 0 / std 1 per feature; test uses train statistics") {
  dataset train = features(5000, 4, 1), test = features(1000, 4, 2);
  const dataset test_raw = test;
  pipeline p({"standardize"});
  p.fit_apply(train);
  for (std::size_t j = 0; j < 4; ++j) {
    double m, sd;
    column_moments(train, j, m, sd);
    CHECK(std::abs(m) < 1e-4);
    CHECK(sd == doctest::Approx(1.0).epsilon(1e-4));
  }
  // The test set is mapped with the train mean/std, not its own: re-derive them from a raw
  // copy of train and compare.
  dataset train_raw = features(5000, 4, 1);
  p.apply(test);
  for (std::size_t j = 0; j < 4; ++j) {
    double m, sd;
    column_moments(train_raw, j, m, sd);
    for (std::size_t i = 0; i < test.n; i += 97) {
      CHECK(test.x[i * 4 + j] == doctest::Approx((test_raw.x[i * 4 + j] - m) / sd).epsilon(1e-4));
    }
  }
}

TEST_CASE("standardize:global and normalize variants") {
  dataset d = features(2000, 3, 3);
  pipeline g({"standardise:global"});
  g.fit_apply(d);
  const double mean = std::accumulate(d.x.begin(), d.x.end(), 0.0) / d.x.size();
  double v = 0;
  for (float x : d.x) v += (x - mean) * (x - mean);
  CHECK(std::abs(mean) < 1e-4);
  CHECK(std::sqrt(v / d.x.size()) == doctest::Approx(1.0).epsilon(1e-4));

  dataset imgs = random_images(10, 1, 4, 4, 4);
  dataset copy = imgs;
  pipeline mm({"normalize"});
  mm.fit_apply(imgs);
  const auto [lo, hi] = std::minmax_element(imgs.x.begin(), imgs.x.end());
  CHECK(*lo == doctest::Approx(0.0));
  CHECK(*hi == doctest::Approx(1.0));

  pipeline div({"normalize:255"});
  div.fit_apply(copy);
  const dataset again = random_images(10, 1, 4, 4, 4);
  for (std::size_t i = 0; i < copy.x.size(); ++i)
    CHECK(copy.x[i] == doctest::Approx(again.x[i] / 255));
}

TEST_CASE("flip: twice is the identity, once mirrors every row, p=0.5 flips about half") {
  const dataset d = random_images(3, 2, 5, 6, 5);
  pipeline p({"flip:1"});
  dataset once = d;
  p.fit(d);
  troupe::rng r{1};
  p.augment(once, r);
  for (std::size_t i = 0; i < d.n; ++i)
    for (std::size_t c = 0; c < 2; ++c)
      for (std::size_t y = 0; y < 5; ++y)
        for (std::size_t x = 0; x < 6; ++x)
          CHECK(once.row(i)[(c * 5 + y) * 6 + x] == d.row(i)[(c * 5 + y) * 6 + (5 - x)]);
  dataset twice = once;
  p.augment(twice, r);
  CHECK(twice.x == d.x);

  dataset many = random_images(2000, 1, 2, 3, 6);
  const dataset before = many;
  pipeline half({"flip"});
  half.fit(many);
  troupe::rng r2{2};
  half.augment(many, r2);
  std::size_t flipped = 0;
  for (std::size_t i = 0; i < many.n; ++i)
    flipped += !std::equal(many.row(i), many.row(i) + 6, before.row(i));
  CHECK(flipped > 900);
  CHECK(flipped < 1100);
}

TEST_CASE("crop keeps the shape and shifts content by at most the padding") {
  dataset d = random_images(50, 3, 8, 8, 7);
  for (auto& v : d.x) v += 1;  // strictly positive, so padding zeros are recognisable
  const dataset before = d;
  pipeline p({"crop:2"});
  p.fit(d);
  troupe::rng r{3};
  p.augment(d, r);
  CHECK(d.sample_shape == shape_t{3, 8, 8});
  CHECK(d.x.size() == before.x.size());
  std::size_t moved = 0;
  for (std::size_t i = 0; i < d.n; ++i) {
    // Some shift (dy, dx) in [-2, 2]^2 must explain every output pixel.
    bool found = false;
    for (long dy = -2; dy <= 2 && !found; ++dy)
      for (long dx = -2; dx <= 2 && !found; ++dx) {
        bool ok = true;
        for (long c = 0; c < 3 && ok; ++c)
          for (long y = 0; y < 8 && ok; ++y)
            for (long x = 0; x < 8 && ok; ++x) {
              const long sy = y + dy, sx = x + dx;
              const float want = (sy < 0 || sy >= 8 || sx < 0 || sx >= 8)
                                     ? 0.0f
                                     : before.row(i)[(c * 8 + sy) * 8 + sx];
              ok = d.row(i)[(c * 8 + y) * 8 + x] == want;
            }
        if (ok) {
          found = true;
          moved += dy != 0 || dx != 0;
        }
      }
    CHECK(found);
  }
  CHECK(moved > 40);  // 24 of 25 shifts move the image
}

TEST_CASE("resize: constant stays constant, a linear ramp stays a ramp") {
  dataset c;
  c.name = "const";
  c.n = 2;
  c.sample_shape = {2, 5, 7};
  c.x.assign(2 * 2 * 5 * 7, 0.375f);
  pipeline p({"resize:11x3"});
  p.fit_apply(c);
  CHECK(c.sample_shape == shape_t{2, 11, 3});
  REQUIRE(c.x.size() == 2 * 2 * 11 * 3);
  for (float v : c.x) CHECK(v == doctest::Approx(0.375f));

  // v(y, x) = 2y + 3x on a 4x6 grid; after resizing to HxW with corner alignment, output (i, j)
  // samples source (i (4-1)/(H-1), j (6-1)/(W-1)), where the plane is exactly reproduced.
  for (auto [h, w] : {std::pair<std::size_t, std::size_t>{7, 11}, {2, 3}, {4, 6}}) {
    dataset ramp;
    ramp.name = "ramp";
    ramp.n = 1;
    ramp.sample_shape = {1, 4, 6};
    for (std::size_t y = 0; y < 4; ++y)
      for (std::size_t x = 0; x < 6; ++x) ramp.x.push_back(2.0f * y + 3.0f * x);
    pipeline q({"resize:" + std::to_string(h) + "x" + std::to_string(w)});
    q.fit_apply(ramp);
    for (std::size_t y = 0; y < h; ++y)
      for (std::size_t x = 0; x < w; ++x) {
        const double sy = y * 3.0 / (h - 1), sx = x * 5.0 / (w - 1);
        CHECK(ramp.x[y * w + x] == doctest::Approx(2 * sy + 3 * sx).epsilon(1e-5));
      }
  }
}

TEST_CASE("pipeline chains fitted transforms, applies them to test data, and rejects bad specs") {
  dataset train = random_images(20, 1, 6, 6, 8), test = random_images(5, 1, 6, 6, 9);
  pipeline p({"resize:3x3", "flip", "standardize"});
  CHECK(p.names() == std::vector<std::string>{"resize:3x3", "flip", "standardize"});
  CHECK(p.has_augmentation());
  CHECK_THROWS(p.apply(test));  // not fitted yet
  p.fit_apply(train);
  p.apply(test);
  CHECK(test.sample_shape == shape_t{1, 3, 3});
  CHECK(train.sample_shape == shape_t{1, 3, 3});

  for (const std::string spec : {"blur", "resize", "resize:0x4", "resize:ax4", "flip:2", "crop:-1",
                                 "normalize:0", "standardize:local"}) {
    CAPTURE(spec);
    const auto msg = error_of(spec);
    CHECK(msg.find("\"" + spec + "\"") != std::string::npos);
  }

  dataset flat = features(10, 3, 1);
  pipeline img_only({"flip"});
  CHECK_THROWS_AS(img_only.fit(flat), troupe::input_error);
}
