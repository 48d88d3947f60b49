// param_layout, the model registry and spec validation.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "core/testing.hpp"
#include "models/model.hpp"
#include "models/sequential.hpp"

using namespace troupe::models;

using troupe::testing::input_error_of;

TEST_CASE("param_layout packs views densely in insertion order") {
  param_layout l;
  l.add("a.weight", {3, 4});
  l.add("a.bias", {3});
  const auto& c = l.add("b", {2, 1, 5});
  CHECK(c.offset == 15);
  CHECK(c.size == 10);
  CHECK(l.size() == 25);
  CHECK(l.find("a.bias").offset == 12);
  CHECK(l.find("a.bias").shape == std::vector<std::size_t>{3});
  CHECK(input_error_of([&] { l.find("nope"); }).find("nope") != std::string::npos);
  CHECK_THROWS_AS(l.add("b", {1}), troupe::input_error);
}

TEST_CASE("built-in kinds are registered and have the documented architectures") {
  const auto kinds = model_kinds();
  for (const char* k : {"softmax", "mlp", "cnn", "linear"})
    CHECK(std::find(kinds.begin(), kinds.end(), k) != kinds.end());

  // Default MLP 784-256-128-10: 784*256+256 + 256*128+128 + 128*10+10 = 200960+32896+1290.
  auto mlp = make_model({"mlp", {784}, 10, {}});
  CHECK(mlp->kind() == "mlp");
  CHECK(mlp->param_count() == 235146);
  CHECK(mlp->layout().find("fc1.weight").shape == std::vector<std::size_t>{256, 784});
  CHECK(mlp->layout().find("fc3.bias").size == 10);

  // Default CNN on 1x28x28: conv 16*1*9+16 = 160, conv 32*16*9+32 = 4640, after two pools 32x7x7
  // = 1568 -> fc 1568*128+128 = 200832, fc 128*10+10 = 1290.
  auto cnn = make_model({"cnn", {1, 28, 28}, 10, {}});
  CHECK(cnn->param_count() == 160 + 4640 + 200832 + 1290);
  CHECK(cnn->layout().find("conv2.weight").shape == std::vector<std::size_t>{32, 16, 3, 3});
  CHECK(cnn->layout().find("fc1.weight").shape == std::vector<std::size_t>{128, 1568});

  // Softmax regression and linear regression: one dense layer each.
  CHECK(make_model({"softmax", {3, 4}, 5, {}})->param_count() == 12 * 5 + 5);
  CHECK(make_model({"linear", {7}, 10, {}})->param_count() == 8);
}

TEST_CASE("unknown kinds and misfitting specs are input errors that say what is wrong") {
  CHECK(input_error_of([] {
          make_model({"transformer", {4}, 10, {}});
        }).find("transformer") != std::string::npos);
  CHECK(input_error_of([] {
          make_model({"cnn", {784}, 10, {}});
        }).find("{C,H,W}") != std::string::npos);
  CHECK_THROWS_AS(make_model({"cnn", {1, 3, 3}, 10, {}}), troupe::input_error);  // 2 pools on 3x3
  model_spec even{"cnn", {1, 8, 8}, 10, {}};
  even.kernel = 4;
  CHECK(input_error_of([&] { make_model(even); }).find("kernel") != std::string::npos);
  CHECK_THROWS_AS(make_model({"mlp", {}, 10, {}}), troupe::input_error);
  CHECK_THROWS_AS(make_model({"mlp", {4}, 1, {}}), troupe::input_error);
  CHECK_THROWS_AS(make_model({"mlp", {4}, 10, {8, 0}}), troupe::input_error);
  CHECK_THROWS_AS(make_model({"softmax", {4}, 10, {8}}), troupe::input_error);
}

TEST_CASE("a custom registered kind is made by make_model") {
  // A two-layer regressor built from the sequential parts an embedding app can use too.
  struct custom {
    static std::unique_ptr<model> make(const model_spec& spec) {
      auto m = std::make_unique<sequential>("tiny-regressor", spec, make);
      m->add_dense("hidden", 3, true, 1.0);
      m->add_dense("out", 1, false, 1.0);
      m->set_loss(loss_kind::squared_error);
      return m;
    }
  };
  register_model("tiny-regressor", custom::make);
  const auto kinds = model_kinds();
  CHECK(std::find(kinds.begin(), kinds.end(), "tiny-regressor") != kinds.end());
  auto m = make_model({"tiny-regressor", {2}, 10, {}});
  CHECK(m->kind() == "tiny-regressor");
  CHECK(m->param_count() == 2 * 3 + 3 + 3 + 1);
  CHECK(m->clone()->kind() == "tiny-regressor");

  std::vector<float> p(m->param_count()), g(m->param_count());
  troupe::rng r{3};
  m->init_params(p.data(), r);
  const std::vector<float> x = {0.5f, -1.0f}, t = {2.0f};
  batch b;
  b.x = x.data();
  b.targets = t.data();
  b.size = 1;
  const auto st = m->forward_backward(p.data(), b, g.data());
  CHECK(st.samples == 1);
  CHECK(st.loss_sum > 0.0);
  CHECK_THROWS_AS(register_model("", custom::make), troupe::input_error);
}

TEST_CASE("a model refuses a batch without the targets its loss needs") {
  auto m = make_model({"linear", {2}, 10, {}});
  std::vector<float> p(m->param_count()), g(m->param_count()), x = {1.0f, 2.0f};
  batch b;
  b.x = x.data();
  b.size = 1;
  CHECK_THROWS_AS(m->forward_backward(p.data(), b, g.data()), troupe::input_error);
}
