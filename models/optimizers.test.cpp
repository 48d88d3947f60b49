// Optimizers against golden values worked by hand from each published update rule, state
// round-trips and spec validation. Unless noted: p0 = {1, -2}, gradients g1 = {0.5, -1},
// g2 = {-0.25, 2}, g3 = {0.125, 2}, lr = 0.1, and beta1 = beta2 = 0.5 so the arithmetic stays
// exact by hand. eps = 1e-8 moves no result below by more than 1e-7.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "models/max_adabelief.hpp"
#include "models/optimizer.hpp"

using namespace troupe::models;

namespace {

const std::vector<std::vector<float>> grads = {{0.5f, -1.0f}, {-0.25f, 2.0f}, {0.125f, 2.0f}};

optimizer_spec spec_of(const std::string& kind) {
  optimizer_spec s;
  s.kind = kind;
  s.lr = 0.1;
  s.beta1 = 0.5;
  s.beta2 = 0.5;
  return s;
}

// Runs steps from p0 = {1, -2}, checking p after each step against expected (within 1e-6).
void expect_trajectory(const optimizer_spec& s, const std::vector<std::vector<double>>& expected) {
  auto opt = make_optimizer(s, 2);
  std::vector<float> p = {1.0f, -2.0f};
  for (std::size_t t = 0; t < expected.size(); ++t) {
    opt->step(p.data(), grads[t].data());
    CAPTURE(t + 1);
    for (std::size_t i = 0; i < 2; ++i) CHECK(std::abs(p[i] - expected[t][i]) <= 1e-6);
  }
  CHECK(opt->steps_taken() == static_cast<std::int64_t>(expected.size()));
}

}  // namespace

TEST_CASE("plain sgd") {
  // p -= 0.1 g: {1 - 0.05, -2 + 0.1}, then {0.95 + 0.025, -1.9 - 0.2}
  expect_trajectory(spec_of("sgd"), {{0.95, -1.9}, {0.975, -2.1}});
}

TEST_CASE("sgd with L2 weight decay") {
  auto s = spec_of("sgd");
  s.weight_decay = 0.1;
  // t1: g' = g + 0.1 p = {0.5 + 0.1, -1 - 0.2} = {0.6, -1.2};  p = {1 - 0.06, -2 + 0.12}
  // t2: g' = {-0.25 + 0.094, 2 - 0.188} = {-0.156, 1.812};    p = {0.94 + 0.0156, -1.88 - 0.1812}
  expect_trajectory(s, {{0.94, -1.88}, {0.9556, -2.0612}});
}

TEST_CASE("momentum, PyTorch convention") {
  auto s = spec_of("momentum");
  s.momentum = 0.9;
  // t1: v = g = {0.5, -1};                                p = {1 - 0.05, -2 + 0.1}
  // t2: v = 0.9 v + g = {0.45 - 0.25, -0.9 + 2} = {0.2, 1.1};  p = {0.95 - 0.02, -1.9 - 0.11}
  // t3: v = {0.18 + 0.125, 0.99 + 2} = {0.305, 2.99};    p = {0.93 - 0.0305, -2.01 - 0.299}
  expect_trajectory(s, {{0.95, -1.9}, {0.93, -2.01}, {0.8995, -2.309}});
}

TEST_CASE("momentum with nesterov") {
  auto s = spec_of("momentum");
  s.momentum = 0.9;
  s.nesterov = true;
  // t1: v = {0.5, -1};   p -= 0.1 (g + 0.9 v) = 0.1 {0.95, -1.9}          -> {0.905, -1.81}
  // t2: v = {0.2, 1.1};  p -= 0.1 {-0.25 + 0.18, 2 + 0.99} = {-0.007, 0.299} -> {0.912, -2.109}
  expect_trajectory(s, {{0.905, -1.81}, {0.912, -2.109}});
}

TEST_CASE("adam, bias-corrected, eps outside the square root") {
  // t1: m = 0.5 g = {0.25, -0.5}; v = 0.5 g^2 = {0.125, 0.5}; corrections 1 - 0.5 = 0.5:
  //     m_hat = {0.5, -1}, v_hat = {0.25, 1}; p -= 0.1 {0.5 / 0.5, -1 / 1}      -> {0.9, -1.9}
  // t2: m = {0.125 - 0.125, -0.25 + 1} = {0, 0.75}; v = {0.0625 + 0.03125, 0.25 + 2}
  //     = {0.09375, 2.25}; corrections 1 - 0.25 = 0.75: m_hat = {0, 1}, v_hat = {0.125, 3};
  //     p -= 0.1 {0, 1 / sqrt(3)} = {0, 0.0577350269}                      -> {0.9, -1.9577350269}
  expect_trajectory(spec_of("adam"), {{0.9, -1.9}, {0.9, -1.9577350269}});
}

TEST_CASE("adam couples weight decay into the gradient") {
  auto s = spec_of("adam");
  s.weight_decay = 0.5;
  auto opt = make_optimizer(s, 1);
  float p = 1.0f;
  const float g = -0.25f;
  // g' = -0.25 + 0.5 * 1 = 0.25: the decay flips the sign. Step 1 of Adam moves by lr * sign(g').
  opt->step(&p, &g);
  CHECK(std::abs(p - 0.9) <= 1e-6);
}

TEST_CASE("adamw decouples weight decay") {
  auto s = spec_of("adamw");
  s.weight_decay = 0.5;
  // Each step first p *= 1 - lr * wd = 0.95, then the Adam step on the raw gradient (as above).
  // t1: {0.95, -1.9} - {0.1, -0.1}                              -> {0.85, -1.8}
  // t2: {0.8075, -1.71} - {0, 0.0577350269}                     -> {0.8075, -1.7677350269}
  expect_trajectory(s, {{0.85, -1.8}, {0.8075, -1.7677350269}});
}

TEST_CASE("adabelief without rectification") {
  // t1: m = {0.25, -0.5}; r = g - m = {0.25, -0.5}; s = 0.5 r^2 + eps = {0.03125, 0.125};
  //     m_hat = {0.5, -1}; s_hat = s / 0.5 = {0.0625, 0.25}, sqrt {0.25, 0.5};
  //     p -= 0.1 {2, -2}                                                   -> {0.8, -1.8}
  // t2: m = {0, 0.75}; r = {-0.25, 1.25}; s = {0.015625 + 0.03125, 0.0625 + 0.78125}
  //     = {0.046875, 0.84375}; m_hat = {0, 1}; s_hat = s / 0.75 = {0.0625, 1.125};
  //     p -= 0.1 {0, 1 / sqrt(1.125)} = {0, 0.0942809042}               -> {0.8, -1.8942809042}
  expect_trajectory(spec_of("adabelief"), {{0.8, -1.8}, {0.8, -1.8942809042}});
}

TEST_CASE("adabelief and max-adabelief put eps inside s and outside the square root") {
  for (const char* kind : {"adabelief", "max-adabelief"}) {
    CAPTURE(kind);
    auto s = spec_of(kind);
    s.lr = 1.0;
    s.eps = 0.25;
    auto opt = make_optimizer(s, 1);
    float p = 0.0f;
    const float g = 1.0f;
    // m = 0.5; r = 0.5; s = 0.5 * 0.25 + 0.25 = 0.375; m_hat = 1; s_hat = 0.75;
    // p = -1 / (sqrt(0.75) + 0.25) = -1 / 1.1160254038 = -0.8960369510
    opt->step(&p, &g);
    CHECK(std::abs(p - -0.8960369510) <= 1e-6);
  }
}

TEST_CASE("max-adabelief keeps the running max of the raw second moment") {
  // t1, t2: s grows ({0.03125, 0.125} then {0.046875, 0.84375}), so s_max = s and the steps
  //         are AdaBelief's: {0.8, -1.8}, {0.8, -1.8942809042}.
  // t3: g = {0.125, 2}: m = {0.0625, 0.375 + 1} = {0.0625, 1.375}; r = {0.0625, 0.625};
  //     s = {0.0234375 + 0.001953125, 0.421875 + 0.1953125} = {0.025390625, 0.6171875}, below
  //     s_max = {0.046875, 0.84375}, which stays. Corrections 1 - 0.125 = 0.875:
  //     m_hat = {0.0714285714, 1.5714285714}; s_hat = s_max / 0.875 = {0.0535714286, 0.9642857143}
  //     sqrt {0.2314550249, 0.9819805061}; p -= 0.1 m_hat / sqrt = {0.0308606700, 0.1600264528}
  //     -> {0.7691393300, -2.0543073570}. (AdaBelief would use s and step to {0.758, -2.081}.)
  expect_trajectory(spec_of("max-adabelief"),
                    {{0.8, -1.8}, {0.8, -1.8942809042}, {0.7691393300, -2.0543073570}});
}

TEST_CASE("distributed max-adabelief: mean of corrected m, max of corrected s") {
  const auto s = spec_of("max-adabelief");
  // Two workers at step 1 with gradients 0.5 and -1 on the same parameter p = 1:
  //   m_hat = g: {0.5, -1}, mean -0.25;  s_hat = 0.25 g^2: {0.0625, 0.25}, max 0.25, sqrt 0.5;
  //   p = 1 - 0.1 * (-0.25 / 0.5) = 1.05
  const float ga = 0.5f, gb = -1.0f;
  float ma = 0, sa = 0, xa = 0, mb = 0, sb = 0, xb = 0, mha, sha, mhb, shb;
  max_adabelief::local_moments(s, 1, 1, nullptr, &ga, &ma, &sa, &xa, &mha, &sha);
  max_adabelief::local_moments(s, 1, 1, nullptr, &gb, &mb, &sb, &xb, &mhb, &shb);
  const float m_hat = (mha + mhb) / 2, s_hat = std::max(sha, shb);
  float p = 1.0f;
  max_adabelief::apply_update(s, 1, &p, &m_hat, &s_hat);
  CHECK(std::abs(p - 1.05) <= 1e-6);

  // One worker is exactly the replicated optimizer.
  auto opt = make_optimizer(s, 2);
  std::vector<float> p1 = {1.0f, -2.0f}, p2 = p1, m(2), v(2), vmax(2), mh(2), vh(2);
  for (std::int64_t t = 1; t <= 3; ++t) {
    opt->step(p1.data(), grads[t - 1].data());
    max_adabelief::local_moments(s, t, 2, p2.data(), grads[t - 1].data(), m.data(), v.data(),
                                 vmax.data(), mh.data(), vh.data());
    max_adabelief::apply_update(s, 2, p2.data(), mh.data(), vh.data());
  }
  CHECK(p1 == p2);
}

TEST_CASE("state save and load continue identically, for every kind") {
  for (const char* kind : {"sgd", "momentum", "adam", "adamw", "adabelief", "max-adabelief"}) {
    CAPTURE(kind);
    auto s = spec_of(kind);
    s.weight_decay = 0.01;
    auto a = make_optimizer(s, 2);
    std::vector<float> pa = {1.0f, -2.0f};
    a->step(pa.data(), grads[0].data());
    a->step(pa.data(), grads[1].data());
    const optimizer_state st = a->state();
    CHECK(st.step == 2);
    auto b = make_optimizer(s, 2);
    b->load_state(st);
    CHECK(b->steps_taken() == 2);
    const std::vector<float> before = pa;
    std::vector<float> pb = pa;
    a->step(pa.data(), grads[2].data());
    b->step(pb.data(), grads[2].data());
    CHECK(pa == pb);
    CHECK(b->steps_taken() == 3);
    // The state matters: a fresh optimizer's third step differs, except plain SGD's.
    auto fresh = make_optimizer(s, 2);
    std::vector<float> pf = before;
    fresh->step(pf.data(), grads[2].data());
    if (std::string(kind) != "sgd") CHECK(pf != pa);
  }
}

TEST_CASE("state buffers are named per family") {
  auto names = [](const char* kind) { return make_optimizer(spec_of(kind), 3)->state().names; };
  using v = std::vector<std::string>;
  CHECK(names("sgd") == v{});
  CHECK(names("momentum") == v{"v"});
  CHECK(names("adam") == v{"m", "v"});
  CHECK(names("adamw") == v{"m", "v"});
  CHECK(names("adabelief") == v{"m", "s"});
  CHECK(names("max-adabelief") == v{"m", "s", "s_max"});
  CHECK(make_optimizer(spec_of("adam"), 3)->state().buffers.at(1).size() == 3);
}

TEST_CASE("load_state rejects mismatched state") {
  auto opt = make_optimizer(spec_of("adam"), 3);
  auto st = opt->state();
  auto wrong_size = st;
  wrong_size.buffers[0].resize(4);
  CHECK_THROWS_AS(opt->load_state(wrong_size), troupe::input_error);
  auto wrong_names = st;
  wrong_names.names = {"m", "s"};
  CHECK_THROWS_AS(opt->load_state(wrong_names), troupe::input_error);
  CHECK_THROWS_AS(opt->load_state(make_optimizer(spec_of("sgd"), 3)->state()), troupe::input_error);
}

TEST_CASE("make_optimizer names the bad kind or key") {
  auto message = [](const optimizer_spec& s) -> std::string {
    try {
      make_optimizer(s, 1);
    } catch (const troupe::input_error& e) {
      return e.what();
    }
    return "";
  };
  CHECK(message(spec_of("lamb")).find("lamb") != std::string::npos);
  auto s = spec_of("adam");
  s.beta2 = 1.0;
  CHECK(message(s).find("beta2") != std::string::npos);
  s = spec_of("sgd");
  s.lr = -1;
  CHECK(message(s).find("lr") != std::string::npos);
  s = spec_of("momentum");
  s.momentum = 1.5;
  CHECK(message(s).find("momentum") != std::string::npos);
}

TEST_CASE("an update in parts, in any order, gives step()'s bits for every optimizer") {
  const std::size_t n = 1000;
  for (const std::string kind :
       {"sgd", "momentum", "adam", "adamw", "adabelief", "max-adabelief"}) {
    CAPTURE(kind);
    auto s = spec_of(kind);
    s.weight_decay = 0.01;
    auto whole = make_optimizer(s, n);
    auto parts = make_optimizer(s, n);
    std::vector<float> p1(n), p2(n), g(n);
    for (std::size_t i = 0; i < n; ++i) p1[i] = p2[i] = 0.01f * static_cast<float>(i % 37) - 0.2f;
    for (int t = 0; t < 3; ++t) {
      for (std::size_t i = 0; i < n; ++i)
        g[i] = 0.001f * static_cast<float>((i * (t + 3)) % 101) - 0.05f;
      whole->step(p1.data(), g.data());
      parts->begin_step();
      // Three uneven ranges, the last first (another thread may well take it first).
      parts->update(p2.data(), g.data(), 640, n - 640);
      parts->update(p2.data(), g.data(), 0, 17);
      parts->update(p2.data(), g.data(), 17, 623);
    }
    CHECK(p1 == p2);
    CHECK(parts->steps_taken() == 3);
    CHECK(parts->state().buffers == whole->state().buffers);
  }
}
