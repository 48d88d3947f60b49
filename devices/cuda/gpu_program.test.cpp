// The cuda backend's step against the CPU model's, on the host target everywhere (the same
// kernels as loops, the same GEMM calls through OpenBLAS) and on the GPU where there is one.
#include <doctest/doctest.h>

#ifdef TROUPE_HAVE_CUDA
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "devices/cuda/gpu_program.hpp"
#include "devices/cuda/gpu_test_support.hpp"
#include "devices/cuda_info.hpp"
#include "models/model.hpp"
#include "models/optimizer.hpp"

using namespace troupe;
using troupe::devices::gpu::target;
using troupe::devices::gpu::testing::relative_l2;

namespace {

// Every case's model and rows, drawn from seed 7.
struct fixture : devices::gpu::testing::model_rows {
  fixture(const std::string& kind, std::vector<std::size_t> shape, std::vector<std::size_t> hidden,
          std::size_t n)
      : model_rows(kind, std::move(shape), std::move(hidden), n, 7) {}
};

std::vector<target> targets() {
  std::vector<target> t{target::host};
  if (devices::cuda_device_count() > 0) t.push_back(target::cuda);
  return t;
}

const char* name(target t) {
  return t == target::host ? "host" : "cuda";
}

void same_step(fixture& f, std::size_t n, std::size_t max_batch) {
  std::vector<float> want(f.model->param_count()), got(want.size());
  const auto cpu = f.model->forward_backward(f.params.data(), f.batch(n), want.data());
  for (target t : targets()) {
    CAPTURE(name(t));
    devices::gpu::program_options o;
    o.where = t;
    o.max_batch = max_batch;
    devices::gpu::program p(*f.model->program(), o);
    const auto gpu = p.step(f.params.data(), f.batch(n), got.data());
    CHECK(gpu.samples == cpu.samples);
    CHECK(gpu.correct == cpu.correct);
    CHECK(gpu.loss_sum == doctest::Approx(cpu.loss_sum).epsilon(1e-5));
    CHECK(relative_l2(got, want) < 1e-5);
    const auto ev = p.evaluate(f.params.data(), f.batch(n));
    const auto cev = f.model->evaluate(f.params.data(), f.batch(n));
    CHECK(ev.correct == cev.correct);
    CHECK(ev.loss_sum == doctest::Approx(cev.loss_sum).epsilon(1e-5));
  }
}

}  // namespace

TEST_CASE("gpu program: the MLP's gradient sum and statistics match the CPU model's") {
  fixture f("mlp", {784}, {64, 32}, 37);
  same_step(f, 37, 16);  // grows past max_batch; evaluation goes in chunks
  same_step(f, 5, 64);
}

TEST_CASE("gpu program: the CNN's gradient (conv, pool, dense) matches the CPU model's") {
  fixture f("cnn", {1, 12, 10}, {4, 6, 16}, 9);
  same_step(f, 9, 16);
  fixture one("cnn", {2, 6, 6}, {3, 8}, 4);  // one conv, then the classifier
  one.spec.kernel = 5;
  one.model = models::make_model(one.spec);
  one.params.resize(one.model->param_count());
  rng r(3);
  one.model->init_params(one.params.data(), r);
  same_step(one, 4, 4);
}

TEST_CASE("gpu program: a label outside the classes is refused before it reaches the device") {
  fixture f("mlp", {8}, {4}, 3);
  f.labels[1] = 10;
  devices::gpu::program_options o;
  o.where = target::host;
  devices::gpu::program p(*f.model->program(), o);
  std::vector<float> g(f.model->param_count());
  CHECK_THROWS_WITH_AS(p.step(f.params.data(), f.batch(3), g.data()),
                       doctest::Contains("label 10 is outside [0, 10)"), troupe::input_error);
}

TEST_CASE("resident trainer: steps on the device follow the CPU's optimizer, step for step") {
  for (const char* kind : {"adam", "momentum", "sgd", "adamw"}) {
    CAPTURE(kind);
    fixture f("mlp", {20}, {16}, 96);
    models::optimizer_spec os;
    os.kind = kind;
    os.lr = 0.01;
    os.weight_decay = std::string(kind) == "adamw" ? 0.01 : 0.0;
    // The CPU reference: the bench's loop (sum, scale by 1/n, step) over a fixed order.
    std::vector<std::int64_t> order(f.rows);
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = (i * 37) % f.rows;
    auto opt = models::make_optimizer(os, f.model->param_count());
    std::vector<float> want = f.params, g(want.size()), xb(16 * 20);
    std::vector<std::int32_t> yb(16);
    double cpu_loss = 0.0;
    for (std::size_t s = 0; s < 6; ++s) {
      for (std::size_t i = 0; i < 16; ++i) {
        const auto row = static_cast<std::size_t>(order[s * 16 + i]);
        std::copy_n(f.x.data() + row * 20, 20, xb.data() + i * 20);
        yb[i] = f.labels[row];
      }
      models::batch b;
      b.x = xb.data();
      b.labels = yb.data();
      b.size = 16;
      cpu_loss += f.model->forward_backward(want.data(), b, g.data()).loss_sum;
      for (auto& v : g) v *= 1.0f / 16.0f;
      opt->step(want.data(), g.data());
    }
    for (target t : targets()) {
      CAPTURE(name(t));
      devices::gpu::trainer_options o;
      o.where = t;
      o.max_batch = 16;
      o.graphs = t == target::cuda;
      o.optimizer = os;
      devices::gpu::resident_trainer tr(*f.model->program(), o, f.x.data(), f.labels.data(),
                                        f.rows);
      tr.set_params(f.params.data());
      tr.set_order(order);
      for (int s = 0; s < 6; ++s) tr.step(16);
      const auto st = tr.take_stats();
      CHECK(st.samples == 96);
      CHECK(st.loss_sum == doctest::Approx(cpu_loss).epsilon(1e-4));
      std::vector<float> got(want.size());
      tr.get_params(got.data());
      CHECK(relative_l2(got, want) < 1e-5);
      CHECK_THROWS_AS(tr.step(16), troupe::input_error);  // the order is used up
    }
  }
}
#else
TEST_CASE("gpu program: skipped, the CUDA sources are not built without nvcc" *
          doctest::skip(true)) {}
#endif
