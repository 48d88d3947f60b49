#pragma once
// What a model step consumes and returns. A batch is a contiguous block of rows that the caller
// gathered (the sampler decides which rows); the model never owns data.
#include <cstddef>
#include <cstdint>

namespace troupe::models {

struct batch {
  const float* x = nullptr;              // size * features floats, row-major
  const std::int32_t* labels = nullptr;  // classification, size entries (else nullptr)
  const float* targets = nullptr;        // regression, size entries (else nullptr)
  const float* weights = nullptr;        // optional per-sample loss weights (importance sampling)
  float* sample_loss = nullptr;          // optional out: size unweighted per-sample losses
  std::size_t size = 0;
};

// Sums, not means: the runtime adds these across workers and divides by the total sample count,
// so the result is independent of how a global batch was split.
struct step_stats {
  double loss_sum = 0.0;  // sum of per-sample losses (weighted if weights given)
  std::size_t samples = 0;
  std::size_t correct = 0;  // classification only
};

inline step_stats& operator+=(step_stats& a, const step_stats& b) {
  a.loss_sum += b.loss_sum;
  a.samples += b.samples;
  a.correct += b.correct;
  return a;
}

}  // namespace troupe::models
