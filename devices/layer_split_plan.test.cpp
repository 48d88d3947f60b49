#include "devices/layer_split_plan.hpp"

#include <doctest/doctest.h>

#include "core/error.hpp"

using namespace troupe::devices;

namespace {

// A CNN-like chain: two layers cheap on the CPU relative to their output, one dense layer that
// the GPU does far faster.
layer_split_inputs chain() {
  layer_split_inputs in;
  in.names = {"conv1", "pool1", "fc1"};
  in.cpu_seconds = {1e-3, 1e-4, 10e-3};
  in.gpu_seconds = {2e-4, 1e-5, 1e-4};
  in.out_bytes = {4e6, 1e6, 4e3};
  in.input_bytes = 1e6;
  in.param_bytes = {1e3, 0, 4e6};
  in.latency = 1e-5;
  in.per_byte = 1e-10;  // 10 GB/s
  return in;
}

}  // namespace

TEST_CASE("the predicted time of each cut adds the CPU's layers, the GPU's and the copies") {
  const auto in = chain();
  const auto p = plan_layer_split(in);
  REQUIRE(p.predicted.size() == 4);
  auto copy = [&](double b) { return in.latency + b * in.per_byte; };
  // Whole on the GPU: its layers, parameters up and gradient down, the rows up.
  CHECK(p.predicted[0] == doctest::Approx(2e-4 + 1e-5 + 1e-4 + 2 * copy(4.001e6) + copy(1e6)));
  // After pool1: conv1 and pool1 on the CPU, fc1 on the GPU, pool1's output up and its gradient
  // down.
  CHECK(p.predicted[2] ==
        doctest::Approx(1e-3 + 1e-4 + 1e-4 + 2 * copy(4e6) + copy(1e6) + copy(1e6)));
  CHECK(p.predicted[3] == doctest::Approx(11.1e-3));
  CHECK(p.cut == 0);  // the GPU is faster at every layer: no split wins
  const auto text = describe(p, in.names, p.cut);
  CHECK(text.rfind("whole model on the GPU: 1.240 ms predicted;", 0) == 0);
  CHECK(text.find("no split wins") != std::string::npos);
}

TEST_CASE("a slow link and a GPU that is slow at the first layers make the split win") {
  auto in = chain();
  in.gpu_seconds = {20e-3, 1e-3, 1e-4};  // the GPU is bad at the first two layers
  const auto p = plan_layer_split(in);
  CHECK(p.cut == 2);
  CHECK(describe(p, in.names, 2).rfind("cut after pool1 (2 layers on the CPU)", 0) == 0);
  // Forced elsewhere, the text says so and how much the forced split loses.
  const auto forced = describe(p, in.names, 1);
  CHECK(forced.find("(forced; the model's best: cut after pool1") != std::string::npos);
}

TEST_CASE("a forced split that is slower than one device says by how much") {
  const auto in = chain();
  const auto p = plan_layer_split(in);
  const auto text = describe(p, in.names, 2);
  CHECK(text.find("the split loses to one device by ") != std::string::npos);
}

TEST_CASE("inputs of different lengths are refused") {
  auto in = chain();
  in.gpu_seconds.pop_back();
  CHECK_THROWS_AS(plan_layer_split(in), troupe::input_error);
  CHECK_THROWS_AS(plan_layer_split(layer_split_inputs{}), troupe::input_error);
}
