#pragma once
// `troupe bench train`'s GPU path (apps/bench_train_cuda.cpp): the same model, optimizer, seed
// and sample order as the CPU loop in cmd_bench_train.cpp, run by the cuda backend's resident
// trainer (training set on the GPU, one CUDA graph a step).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "data/dataset.hpp"
#include "models/model.hpp"
#include "models/optimizer.hpp"

namespace troupe::apps {

struct train_settings {
  std::size_t batch = 64;
  std::int64_t epochs = 1;
  std::int64_t max_steps = -1;  // < 0: no limit
  std::uint64_t seed = 1;
  bool graphs = true;
  int ordinal = 0;
};

struct train_result {
  double train_seconds = 0.0;  // the steps only, as the CPU loop times them
  std::size_t samples = 0, steps = 0;
  std::int64_t epochs_done = 0;
  models::step_stats test;
  // GPU: the median of the epochs' mean step times after the first (which pays for capturing the
  // graphs, loading kernels and the GPU's clocks coming up); 0 with one epoch or on the CPU.
  double steady_step_us = 0.0;
};

// Throws troupe::input_error when this build has no CUDA or the model or optimizer has no GPU
// kernels, troupe::runtime_failure with the CUDA error's text when the GPU fails.
train_result train_on_gpu(const models::model& m, const models::optimizer_spec& optimizer,
                          std::vector<float> params, const data::dataset& train,
                          const data::dataset& test, const train_settings& s);

}  // namespace troupe::apps
