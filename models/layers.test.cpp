// Gradient checks for every layer kernel, plus forward passes against naive reference loops.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "models/gradcheck.test.hpp"
#include "models/layers/activation.hpp"
#include "models/layers/conv.hpp"
#include "models/layers/dense.hpp"
#include "models/layers/loss.hpp"
#include "models/layers/pool.hpp"

using namespace troupe::models;
using namespace troupe::models::layers;
using namespace troupe::models::testing;
using troupe::rng;

TEST_CASE("dense forward matches a naive loop, with and without the fused ReLU") {
  rng r{1};
  const std::size_t n = 3, in = 4, out = 5;
  auto x = random_vector(r, n * in), w = random_vector(r, out * in), b = random_vector(r, out);
  for (bool relu : {false, true}) {
    std::vector<float> y(n * out);
    dense_forward(x.data(), w.data(), b.data(), y.data(), n, in, out, relu);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t o = 0; o < out; ++o) {
        double z = b[o];
        for (std::size_t k = 0; k < in; ++k) z += double(x[i * in + k]) * w[o * in + k];
        if (relu) z = std::max(z, 0.0);
        CHECK(y[i * out + o] == doctest::Approx(z).epsilon(1e-5));
      }
  }
}

TEST_CASE("dense backward matches central differences") {
  for (bool relu : {false, true}) {
    CAPTURE(relu);
    rng r{2};
    const std::size_t n = 3, in = 4, out = 5;
    std::vector<float> x, w, b, y(n * out);
    for (int tries = 0;; ++tries) {  // pre-activations 0.02 from the kink, as for conv below
      REQUIRE(tries < 1000);
      x = random_vector(r, n * in);
      w = random_vector(r, out * in);
      b = random_vector(r, out);
      dense_forward(x.data(), w.data(), b.data(), y.data(), n, in, out, false);
      if (!relu || min_abs(y) > 0.02f) break;
    }
    const auto proj = random_vector(r, n * out);  // L = sum(y * proj), so dL/dy = proj
    auto f = [&] {
      dense_forward(x.data(), w.data(), b.data(), y.data(), n, in, out, relu);
      return dot(y.data(), proj);
    };
    f();
    auto dy = proj;
    std::vector<float> dx(n * in), dw(out * in, 7.0f), db(out, 7.0f);  // junk: must be overwritten
    dense_backward(x.data(), w.data(), y.data(), dy.data(), dx.data(), dw.data(), db.data(), n, in,
                   out, relu);
    CHECK(gradcheck("dW", w, dw, f) == 0);
    CHECK(gradcheck("db", b, db, f) == 0);
    CHECK(gradcheck("dx", x, dx, f) == 0);

    // Skipping dX leaves dW and dB unchanged.
    f();
    dy = proj;
    std::vector<float> dw2(out * in), db2(out);
    dense_backward(x.data(), w.data(), y.data(), dy.data(), nullptr, dw2.data(), db2.data(), n, in,
                   out, relu);
    CHECK(dw2 == dw);
    CHECK(db2 == db);
  }
}

TEST_CASE("relu forward and backward") {
  rng r{3};
  auto x = away_from_zero(r, 12);
  const auto proj = random_vector(r, 12);
  std::vector<float> y(12);
  auto f = [&] {
    relu_forward(x.data(), y.data(), x.size());
    return dot(y.data(), proj);
  };
  f();
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(y[i] == std::max(x[i], 0.0f));
  std::vector<float> dx(12);
  relu_backward(y.data(), proj.data(), dx.data(), dx.size());
  CHECK(gradcheck("dx", x, dx, f) == 0);
}

namespace {

// Direct 'same' convolution, for reference.
std::vector<double> naive_conv(const conv_shape& s, const std::vector<float>& x,
                               const std::vector<float>& w, const std::vector<float>& b,
                               std::size_t n) {
  std::vector<double> y(n * s.out_size());
  const long p = static_cast<long>(s.k / 2), H = static_cast<long>(s.h), W = static_cast<long>(s.w);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t o = 0; o < s.cout; ++o)
      for (long oy = 0; oy < H; ++oy)
        for (long ox = 0; ox < W; ++ox) {
          double acc = b[o];
          for (std::size_t c = 0; c < s.c; ++c)
            for (long ki = 0; ki < long(s.k); ++ki)
              for (long kj = 0; kj < long(s.k); ++kj) {
                const long iy = oy + ki - p, ix = ox + kj - p;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                acc += double(x[i * s.in_size() + (c * s.h + iy) * s.w + ix]) *
                       w[((o * s.c + c) * s.k + ki) * s.k + kj];
              }
          y[i * s.out_size() + (o * s.h + oy) * s.w + ox] = acc;
        }
  return y;
}

}  // namespace

TEST_CASE("conv forward matches a direct convolution for several kernel sizes") {
  // 9 and 11 reach past the whole 5x4 image: every column, then every row, of a tap is padding.
  for (std::size_t k : {1, 3, 5, 9, 11}) {
    CAPTURE(k);
    rng r{4};
    const conv_shape s{2, 5, 4, 3, k};
    const std::size_t n = 2;
    auto x = random_vector(r, n * s.in_size()), w = random_vector(r, s.cout * s.col_rows()),
         b = random_vector(r, s.cout);
    std::vector<float> y(n * s.out_size()), col(s.col_size());
    conv2d_forward(s, x.data(), w.data(), b.data(), y.data(), n, col.data(), false);
    const auto ref = naive_conv(s, x, w, b, n);
    for (std::size_t i = 0; i < y.size(); ++i) CHECK(y[i] == doctest::Approx(ref[i]).epsilon(1e-5));
  }
}

TEST_CASE("conv backward matches central differences") {
  for (std::size_t k : {1, 3, 5, 9, 11}) {
    for (bool relu : {false, true}) {
      CAPTURE(k);
      CAPTURE(relu);
      rng r{5};
      const conv_shape s{2, 5, 4, 3, k};
      const std::size_t n = 2;
      std::vector<float> x, w, b, y(n * s.out_size()), col(s.col_size()), dcol(s.col_size());
      // Redraw until every pre-activation is 0.02 from the ReLU kink: a 1e-3 step moves none
      // across it (inputs and weights are below 1 in magnitude).
      for (int tries = 0;; ++tries) {
        REQUIRE(tries < 1000);
        x = random_vector(r, n * s.in_size());
        w = random_vector(r, s.cout * s.col_rows());
        b = random_vector(r, s.cout);
        conv2d_forward(s, x.data(), w.data(), b.data(), y.data(), n, col.data(), false);
        if (!relu || min_abs(y) > 0.02f) break;
      }
      const auto proj = random_vector(r, n * s.out_size());
      auto f = [&] {
        conv2d_forward(s, x.data(), w.data(), b.data(), y.data(), n, col.data(), relu);
        return dot(y.data(), proj);
      };
      f();
      auto dy = proj;
      std::vector<float> dx(x.size(), 7.0f), dw(w.size(), 7.0f), db(b.size(), 7.0f);
      conv2d_backward(s, x.data(), w.data(), y.data(), dy.data(), dx.data(), dw.data(), db.data(),
                      n, col.data(), dcol.data(), relu);
      CHECK(gradcheck("dW", w, dw, f) == 0);
      CHECK(gradcheck("db", b, db, f) == 0);
      CHECK(gradcheck("dx", x, dx, f) == 0);
    }
  }
}

TEST_CASE("2x2 max-pool: forward picks the max, backward matches central differences") {
  rng r{6};
  const std::size_t n = 2, c = 2, h = 5, w = 6, oh = 2, ow = 3;  // odd h: last row dropped
  // Distinct values 0.1 apart, so no finite-difference step can change which input wins.
  std::vector<float> x(n * c * h * w);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.1f * static_cast<float>(i);
  r.shuffle(x);
  const auto proj = random_vector(r, n * c * oh * ow);
  std::vector<float> y(proj.size());
  std::vector<std::int32_t> win(proj.size());
  auto f = [&] {
    maxpool2_forward(x.data(), y.data(), win.data(), n, c, h, w);
    return dot(y.data(), proj);
  };
  f();
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t ch = 0; ch < c; ++ch)
      for (std::size_t oy = 0; oy < oh; ++oy)
        for (std::size_t ox = 0; ox < ow; ++ox) {
          const float* p = x.data() + ((i * c + ch) * h + 2 * oy) * w + 2 * ox;
          CHECK(y[((i * c + ch) * oh + oy) * ow + ox] == std::max({p[0], p[1], p[w], p[w + 1]}));
        }
  std::vector<float> dx(x.size(), 7.0f);
  maxpool2_backward(win.data(), proj.data(), dx.data(), n, c, h, w);
  CHECK(gradcheck("dx", x, dx, f) == 0);
}

TEST_CASE("softmax cross-entropy: gradient, weights, correct count") {
  rng r{7};
  const std::size_t n = 4, k = 5;
  auto z = random_vector(r, n * k, -2.0f, 2.0f);
  const std::vector<std::int32_t> labels = {0, 3, 4, 1};
  const std::vector<float> weights = {1.0f, 0.5f, 2.0f, 0.0f};
  for (const float* wt : {static_cast<const float*>(nullptr), weights.data()}) {
    CAPTURE(wt != nullptr);
    auto f = [&] {
      return softmax_cross_entropy(z.data(), labels.data(), wt, n, k, nullptr).loss_sum;
    };
    std::vector<float> dz(n * k);
    const auto st = softmax_cross_entropy(z.data(), labels.data(), wt, n, k, dz.data());
    CHECK(st.samples == n);
    CHECK(st.loss_sum == doctest::Approx(f()));
    CHECK(gradcheck("dz", z, dz, f) == 0);
  }
  // A zero-weight sample contributes neither loss nor gradient.
  std::vector<float> dz(n * k);
  softmax_cross_entropy(z.data(), labels.data(), weights.data(), n, k, dz.data());
  for (std::size_t j = 0; j < k; ++j) CHECK(dz[3 * k + j] == 0.0f);

  // Correct counts argmax == label, whatever the weights.
  const std::vector<float> sure = {5, 0, 0, 0, 5, 0};  // argmax 0, then 1
  const std::vector<std::int32_t> lab = {0, 2};
  const std::vector<float> zero_w = {0.0f, 0.0f};
  CHECK(softmax_cross_entropy(sure.data(), lab.data(), zero_w.data(), 2, 3, nullptr).correct == 1);
}

TEST_CASE("softmax cross-entropy is stable for huge logits") {
  // Softmax is shift-invariant, so logits + 1000 must give the same (finite) loss and gradient.
  const std::vector<float> a = {0.0f, 1.0f, -1.0f}, b = {1000.0f, 1001.0f, 999.0f};
  const std::int32_t label = 2;
  std::vector<float> ga(3), gb(3);
  const auto la = softmax_cross_entropy(a.data(), &label, nullptr, 1, 3, ga.data());
  const auto lb = softmax_cross_entropy(b.data(), &label, nullptr, 1, 3, gb.data());
  CHECK(std::isfinite(lb.loss_sum));
  CHECK(lb.loss_sum == doctest::Approx(la.loss_sum).epsilon(1e-6));
  for (int j = 0; j < 3; ++j) CHECK(gb[j] == doctest::Approx(ga[j]).epsilon(1e-6));
  // -log(e^-1 / (1 + e + e^-1)) = 1 + log(1 + e + 1/e)
  CHECK(la.loss_sum == doctest::Approx(1.0 + std::log(1.0 + std::exp(1.0) + std::exp(-1.0))));
}

TEST_CASE("softmax cross-entropy rejects out-of-range labels") {
  const std::vector<float> z = {0, 0, 0};
  const std::int32_t bad = 3;
  CHECK_THROWS_AS(softmax_cross_entropy(z.data(), &bad, nullptr, 1, 3, nullptr),
                  troupe::input_error);
}

TEST_CASE("squared error: hand-computed loss and central-difference gradient") {
  std::vector<float> y = {1.0f, 2.0f};
  const std::vector<float> t = {0.0f, 4.0f}, w = {1.0f, 0.5f};
  // 0.5 * 1 * (1 - 0)^2 + 0.5 * 0.5 * (2 - 4)^2 = 0.5 + 1.0
  std::vector<float> dy(2);
  const auto st = squared_error(y.data(), t.data(), w.data(), 2, dy.data());
  CHECK(st.loss_sum == doctest::Approx(1.5));
  CHECK(st.samples == 2);
  CHECK(dy[0] == doctest::Approx(1.0));   // 1 * (1 - 0)
  CHECK(dy[1] == doctest::Approx(-1.0));  // 0.5 * (2 - 4)
  auto f = [&] { return squared_error(y.data(), t.data(), w.data(), 2, nullptr).loss_sum; };
  CHECK(gradcheck("dy", y, dy, f) == 0);
}

TEST_CASE("per-sample losses are unweighted and sum to the unweighted loss") {
  rng r{11};
  const std::size_t n = 5, k = 4;
  auto z = random_vector(r, n * k, -2.0f, 2.0f);
  const std::vector<std::int32_t> labels = {0, 3, 1, 2, 1};
  const std::vector<float> weights = {1.0f, 0.5f, 2.0f, 0.0f, 0.25f};
  std::vector<float> per(n, -1.0f);
  const auto weighted =
      softmax_cross_entropy(z.data(), labels.data(), weights.data(), n, k, nullptr, per.data());
  const auto plain = softmax_cross_entropy(z.data(), labels.data(), nullptr, n, k, nullptr);
  double sum = 0.0, wsum = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    CHECK(per[i] > 0.0f);
    sum += per[i];
    wsum += weights[i] * per[i];
  }
  CHECK(sum == doctest::Approx(plain.loss_sum).epsilon(1e-5));
  CHECK(wsum == doctest::Approx(weighted.loss_sum).epsilon(1e-5));

  const std::vector<float> y = {1.0f, 2.0f}, t = {0.0f, 4.0f}, w = {1.0f, 0.5f};
  std::vector<float> se(2);
  squared_error(y.data(), t.data(), w.data(), 2, nullptr, se.data());
  CHECK(se[0] == doctest::Approx(0.5));  // 0.5 (1 - 0)^2, weight not applied
  CHECK(se[1] == doctest::Approx(2.0));  // 0.5 (2 - 4)^2
}
