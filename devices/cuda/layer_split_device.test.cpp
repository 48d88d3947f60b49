// The layer split device against the CPU model, with the GPU part on the host target (the same
// kernels as loops), so it runs everywhere: every cut trains the same gradient, and `auto`
// decides from what it measured and says so.
#include <doctest/doctest.h>

#ifdef TROUPE_HAVE_CUDA
#include <cmath>
#include <vector>

#include "devices/cuda/gpu_test_support.hpp"
#include "devices/cuda/layer_split_device.hpp"
#include "devices/cuda_info.hpp"
#include "models/model.hpp"

using namespace troupe;
using troupe::devices::gpu::testing::relative_l2;

namespace {

// Every case's model and rows, drawn from seed 5; `b` runs them all.
struct setup : devices::gpu::testing::model_rows {
  models::batch b;
  setup(const std::string& kind, std::vector<std::size_t> shape, std::vector<std::size_t> hidden,
        std::size_t n)
      : model_rows(kind, std::move(shape), std::move(hidden), n, 5), b(batch()) {}
};

}  // namespace

TEST_CASE("every cut of the CNN trains the CPU model's gradient") {
  setup s("cnn", {1, 8, 8}, {3, 4, 12}, 6);  // conv, pool, conv, pool, dense, dense
  std::vector<float> want(s.params.size());
  const auto cpu = s.model->forward_backward(s.params.data(), s.b, want.data());
  const std::size_t L = s.model->program()->layers.size();
  REQUIRE(L == 6);
  // The host target everywhere, the GPU too where there is one.
  std::vector<bool> host_only{true};
  if (devices::cuda_device_count() > 0) host_only.push_back(false);
  for (bool host : host_only)
    for (std::size_t k = 0; k <= L; ++k) {
      CAPTURE(k);
      CAPTURE(host);
      devices::device_spec spec;
      spec.name = "gpu/0";
      spec.layer_split = static_cast<int>(k);
      auto dev = devices::make_layer_split_device(spec, host);
      auto m = s.model->clone();
      std::vector<float> got(s.params.size(), 123.0f);  // every slice must be overwritten
      for (int rep = 0; rep < 2; ++rep) {               // the first step also measures
        const auto st = dev->run_step(*m, s.params.data(), s.b, got.data());
        CHECK(st.correct == cpu.correct);
        CHECK(st.loss_sum == doctest::Approx(cpu.loss_sum).epsilon(1e-5));
        CHECK(relative_l2(got, want) < 1e-5);
      }
      CHECK(dev->placement().find(k == 0   ? "whole model on the GPU: "
                                  : k == L ? "whole model on the CPU: "
                                           : "cut after ") != std::string::npos);
    }
}

TEST_CASE("auto cuts where the measured model says, and lists every cut") {
  setup s("mlp", {30}, {16, 8}, 5);
  devices::device_spec spec;
  spec.name = "gpu/0";
  spec.layer_split = -2;
  auto dev = devices::make_layer_split_device(spec, true);
  std::vector<float> got(s.params.size()), want(s.params.size());
  s.model->forward_backward(s.params.data(), s.b, want.data());
  dev->run_step(*s.model->clone(), s.params.data(), s.b, got.data());
  CHECK(relative_l2(got, want) < 1e-5);
  const auto text = dev->placement();
  MESSAGE(text);
  CHECK(text.find("predicted") != std::string::npos);
  CHECK(text.find("(forced") == std::string::npos);  // auto takes the model's best
  CHECK(text.find("whole model on the CPU") != std::string::npos);
  CHECK(text.find("whole model on the GPU") != std::string::npos);
}
#else
TEST_CASE("layer split device: skipped, the CUDA sources are not built without nvcc" *
          doctest::skip(true)) {}
#endif
