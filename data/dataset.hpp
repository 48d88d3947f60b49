#pragma once
// An in-memory dataset: samples as rows of floats, with class labels or regression targets.
// Every loader (IDX, CSV, synthetic) produces one of these; preprocessing steps transform it;
// samplers and split plans hand out indices into it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace troupe::data {

struct dataset {
  std::string name;
  // Shape of one sample, outermost first: {C, H, W} for images, {D} for flat features.
  std::vector<std::size_t> sample_shape;
  std::size_t n = 0;
  // n * features() floats, row-major, one sample per row.
  std::vector<float> x;
  // Classification: n labels in [0, classes). Empty for regression.
  std::vector<std::int32_t> labels;
  // Regression: n targets. Empty for classification.
  std::vector<float> targets;
  std::size_t classes = 0;

  std::size_t features() const {
    std::size_t f = 1;
    for (auto d : sample_shape) f *= d;
    return sample_shape.empty() ? 0 : f;
  }
  const float* row(std::size_t i) const { return x.data() + i * features(); }
  float* row(std::size_t i) { return x.data() + i * features(); }
  bool is_classification() const { return classes > 0; }
};

struct train_test {
  dataset train;
  dataset test;
};

}  // namespace troupe::data
