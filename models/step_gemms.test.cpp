// A training step's GEMM shapes and FLOP count, checked against hand computations.
#include <doctest/doctest.h>

#include "models/model.hpp"
#include "models/step_gemms.hpp"

using namespace troupe::models;

TEST_CASE("the default MLP's step GEMMs and FLOPs at batch 64, by hand") {
  auto mlp = make_model({"mlp", {784}, 10, {}});  // 784-256-128-10
  const auto gemms = training_gemms(*mlp->program(), 64);
  // fc1: forward and dW only (the first layer's input gradient is never computed); fc2 and fc3:
  // forward, dW and dX. Each is 2 * 64 * in * out FLOPs:
  //   fc1 2 x 2*64*784*256 = 51380224, fc2 3 x 2*64*256*128 = 12582912,
  //   fc3 3 x 2*64*128*10 = 491520; total 64454656.
  REQUIRE(gemms.size() == 8);
  CHECK(total_flops(gemms) == 64454656.0);
  // fc1 forward: y[64,256] = x[64,784] W^T, W stored [256,784].
  CHECK(!gemms[0].trans_a);
  CHECK(gemms[0].trans_b);
  CHECK(gemms[0].m == 64);
  CHECK(gemms[0].n == 256);
  CHECK(gemms[0].k == 784);
  CHECK(gemms[0].calls == 1);
  // fc1 dW[256,784] = dy^T x, over the batch.
  CHECK(gemms[1].trans_a);
  CHECK(gemms[1].m == 256);
  CHECK(gemms[1].n == 784);
  CHECK(gemms[1].k == 64);
  // fc3 dX[64,128] = dy[64,10] W[10,128].
  CHECK(gemms[7].m == 64);
  CHECK(gemms[7].n == 128);
  CHECK(gemms[7].k == 10);
}

TEST_CASE("the default CNN's step FLOPs at batch 64, by hand") {
  auto cnn = make_model({"cnn", {1, 28, 28}, 10, {}});  // conv16-pool-conv32-pool-fc128-fc10
  // A 'same' 3x3 conv costs 2 * cout * (h*w) * (cin*9) FLOPs a sample per GEMM:
  //   conv1 (1->16, 28x28): forward and dW, 2 x 2*64*16*784*9 = 28901376
  //   conv2 (16->32, 14x14): forward, dW, dX, 3 x 2*64*32*196*144 = 346816512
  //   fc1 (1568->128): 3 x 2*64*1568*128 = 77070336; fc2 (128->10): 3 x 163840 = 491520
  CHECK(total_flops(training_gemms(*cnn->program(), 64)) == 453279744.0);
  // Linear in the batch: every GEMM runs over the samples once.
  CHECK(total_flops(training_gemms(*cnn->program(), 1)) * 64 == 453279744.0);
}

TEST_CASE("an empty batch multiplies nothing") {
  auto mlp = make_model({"mlp", {5}, 3, {4}});
  CHECK(total_flops(training_gemms(*mlp->program(), 0)) == 0.0);
}
