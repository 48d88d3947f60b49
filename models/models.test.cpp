// The built-in models: gradient checks, the SUM contract, per-sample weights, init, clone.
#include <doctest/doctest.h>

#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "models/gradcheck.test.hpp"
#include "models/model.hpp"
#include "models/sequential.hpp"

using namespace troupe::models;
using namespace troupe::models::testing;
using troupe::rng;

namespace {

// A small batch for spec: inputs, labels (or regression targets) and optional weights.
struct data {
  std::vector<float> x, targets, weights;
  std::vector<std::int32_t> labels;
  std::size_t n = 0;

  batch slice(std::size_t first, std::size_t count, bool weighted = false) const {
    const std::size_t d = x.size() / n;
    batch b;
    b.x = x.data() + first * d;
    b.labels = labels.empty() ? nullptr : labels.data() + first;
    b.targets = targets.empty() ? nullptr : targets.data() + first;
    b.weights = weighted ? weights.data() + first : nullptr;
    b.size = count;
    return b;
  }
  batch all(bool weighted = false) const { return slice(0, n, weighted); }
};

data make_data(const model_spec& spec, std::size_t n, rng& r) {
  data d;
  d.n = n;
  const std::size_t dim = std::accumulate(spec.input_shape.begin(), spec.input_shape.end(),
                                          std::size_t{1}, std::multiplies<>());
  d.x = random_vector(r, n * dim);
  d.weights = random_vector(r, n, 0.0f, 2.0f);
  if (spec.kind == "linear") {
    d.targets = random_vector(r, n);
  } else {
    for (std::size_t i = 0; i < n; ++i)
      d.labels.push_back(static_cast<std::int32_t>(r.below(spec.classes)));
  }
  return d;
}

std::vector<model_spec> tiny_specs() {
  model_spec softmax{"softmax", {6}, 3, {}};
  model_spec linear{"linear", {4}, 10, {}};
  model_spec mlp{"mlp", {5}, 3, {4, 3}};
  model_spec cnn{"cnn", {2, 6, 6}, 3, {3, 4, 5}};
  model_spec cnn1{"cnn", {1, 5, 4}, 3, {2}};  // one conv, odd sizes, no hidden fc
  cnn1.kernel = 5;
  return {softmax, linear, mlp, cnn, cnn1};
}

// A model of `spec` at its initial parameters and a batch of `n` samples, both drawn from `seed`.
struct model_case {
  std::unique_ptr<model> m;
  std::vector<float> p;
  data d;
};

model_case make_case(const model_spec& spec, std::uint64_t seed, std::size_t n) {
  model_case c;
  c.m = make_model(spec);
  rng r{seed};
  c.p.resize(c.m->param_count());
  c.m->init_params(c.p.data(), r);
  c.d = make_data(spec, n, r);
  return c;
}

}  // namespace

TEST_CASE("every built-in model's gradient matches central differences") {
  for (const auto& spec : tiny_specs()) {
    CAPTURE(spec.kind);
    CAPTURE(spec.hidden.size());
    auto m = make_model(spec);
    rng r{11};
    std::vector<float> p(m->param_count());
    m->init_params(p.data(), r);
    // Random biases too: zero biases put ReLU pre-activations of zero inputs right on the kink.
    for (auto& v : p) v += r.uniform_float(-0.1f, 0.1f);
    const data d = make_data(spec, 3, r);
    for (bool weighted : {false, true}) {
      CAPTURE(weighted);
      std::vector<float> g(p.size());
      const auto st = m->forward_backward(p.data(), d.all(weighted), g.data());
      CHECK(st.samples == 3);
      auto f = [&] { return m->evaluate(p.data(), d.all(weighted)).loss_sum; };
      CHECK(st.loss_sum == doctest::Approx(f()).epsilon(1e-6));
      CHECK(gradcheck(spec.kind, p, g, f) == 0);
    }
  }
}

TEST_CASE("forward_backward returns the SUM: grad(A u B) == grad(A) + grad(B)") {
  for (const auto& spec : tiny_specs()) {
    CAPTURE(spec.kind);
    auto [m, p, d] = make_case(spec, 12, 5);
    for (bool weighted : {false, true}) {
      std::vector<float> gab(p.size()), ga(p.size()), gb(p.size());
      const auto sab = m->forward_backward(p.data(), d.all(weighted), gab.data());
      const auto sa = m->forward_backward(p.data(), d.slice(0, 3, weighted), ga.data());
      const auto sb = m->forward_backward(p.data(), d.slice(3, 2, weighted), gb.data());
      CHECK(sab.samples == sa.samples + sb.samples);
      CHECK(sab.correct == sa.correct + sb.correct);
      CHECK(sab.loss_sum == doctest::Approx(sa.loss_sum + sb.loss_sum).epsilon(1e-5));
      for (std::size_t i = 0; i < p.size(); ++i)
        CHECK(gab[i] == doctest::Approx(ga[i] + gb[i]).epsilon(1e-4).scale(1e-3));
    }
  }
}

TEST_CASE("per-sample weights scale each sample's loss and gradient") {
  for (const auto& spec : tiny_specs()) {
    CAPTURE(spec.kind);
    auto [m, p, d] = make_case(spec, 13, 4);
    std::vector<float> gw(p.size()), expect(p.size(), 0.0f), gi(p.size());
    const auto sw = m->forward_backward(p.data(), d.all(true), gw.data());
    double loss = 0.0;
    for (std::size_t i = 0; i < d.n; ++i) {
      const auto si = m->forward_backward(p.data(), d.slice(i, 1), gi.data());
      loss += d.weights[i] * si.loss_sum;
      for (std::size_t j = 0; j < p.size(); ++j) expect[j] += d.weights[i] * gi[j];
    }
    CHECK(sw.loss_sum == doctest::Approx(loss).epsilon(1e-5));
    CHECK(sw.samples == d.n);
    for (std::size_t j = 0; j < p.size(); ++j)
      CHECK(gw[j] == doctest::Approx(expect[j]).epsilon(1e-4).scale(1e-3));
  }
}

TEST_CASE("a conv runs fused with its pool bit for bit as stage by stage") {
  // forward_backward runs each conv and the pool after it sample by sample; layer_seconds times
  // stages one by one, unfused.
  for (const auto& spec : tiny_specs()) {
    if (spec.kind != "cnn") continue;
    auto [m, p, d] = make_case(spec, 15, 3);
    auto* seq = dynamic_cast<sequential*>(m.get());
    REQUIRE(seq != nullptr);
    std::vector<float> fused(p.size()), staged(p.size());
    m->forward_backward(p.data(), d.all(), fused.data());
    seq->layer_seconds(p.data(), d.all(), staged.data());
    CHECK(fused == staged);
  }
}

TEST_CASE("forward_backward overwrites grad_sum, including for an empty batch") {
  for (const auto& spec : tiny_specs()) {
    CAPTURE(spec.kind);
    auto [m, p, d] = make_case(spec, 14, 3);
    std::vector<float> clean(p.size()), dirty(p.size(), NAN);
    m->forward_backward(p.data(), d.all(), clean.data());
    m->forward_backward(p.data(), d.all(), dirty.data());
    CHECK(dirty == clean);
    std::vector<float> empty(p.size(), NAN);
    const auto st = m->forward_backward(p.data(), d.slice(0, 0), empty.data());
    CHECK(st.samples == 0);
    for (float v : empty) CHECK(v == 0.0f);
  }
}

TEST_CASE("evaluate in chunks equals the sum of its parts; clone computes the same") {
  model_spec spec{"mlp", {5}, 3, {4}};
  const std::size_t n = 600;  // more than two evaluation chunks
  auto [m, p, d] = make_case(spec, 15, n);
  const auto whole = m->evaluate(p.data(), d.all());
  step_stats parts;
  for (std::size_t i = 0; i < n; i += 100) parts += m->evaluate(p.data(), d.slice(i, 100));
  CHECK(whole.samples == n);
  CHECK(whole.correct == parts.correct);
  CHECK(whole.loss_sum == doctest::Approx(parts.loss_sum).epsilon(1e-9));

  auto c = m->clone();
  CHECK(c->kind() == "mlp");
  CHECK(c->param_count() == m->param_count());
  std::vector<float> g1(p.size()), g2(p.size());
  m->forward_backward(p.data(), d.slice(0, 7), g1.data());
  c->forward_backward(p.data(), d.slice(0, 7), g2.data());
  CHECK(g1 == g2);
  // Own scratch: a large batch through the clone does not disturb the original.
  c->evaluate(p.data(), d.all());
  m->forward_backward(p.data(), d.slice(0, 7), g2.data());
  CHECK(g1 == g2);
}

TEST_CASE("init is deterministic, biases zero, weights He-uniform bounded") {
  auto m = make_model({"cnn", {1, 8, 8}, 10, {}});
  std::vector<float> a(m->param_count()), b(m->param_count()), c(m->param_count());
  rng ra{7}, rb{7}, rc{8};
  m->init_params(a.data(), ra);
  m->init_params(b.data(), rb);
  m->init_params(c.data(), rc);
  CHECK(a == b);
  CHECK(a != c);
  for (const auto& v : m->layout().views()) {
    CAPTURE(v.name);
    const bool bias = v.name.size() > 5 && v.name.substr(v.name.size() - 5) == ".bias";
    double fan_in = 1.0, sq = 0.0;
    for (std::size_t i = 1; i < v.shape.size(); ++i) fan_in *= double(v.shape[i]);
    for (std::size_t i = 0; i < v.size; ++i) {
      const float x = a[v.offset + i];
      if (bias)
        CHECK(x == 0.0f);
      else
        CHECK(std::abs(x) <= std::sqrt(6.0 / fan_in) + 1e-6);
      sq += double(x) * x;
    }
    if (!bias) CHECK(sq > 0.0);
  }
}
