#pragma once
// For the cuda backend's tests: a model with a batch to run it on, and how far a gradient or a
// parameter vector is from the CPU's.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "models/batch.hpp"
#include "models/model.hpp"

namespace troupe::devices::gpu::testing {

// A model of `kind` at its initial parameters and `rows` random samples of 10 classes, all
// drawn from `seed`.
struct model_rows {
  models::model_spec spec;
  std::unique_ptr<models::model> model;
  std::vector<float> params, x;
  std::vector<std::int32_t> labels;
  std::size_t rows;

  model_rows(const std::string& kind, std::vector<std::size_t> shape,
             std::vector<std::size_t> hidden, std::size_t n, std::uint64_t seed)
      : rows(n) {
    spec.kind = kind;
    spec.input_shape = std::move(shape);
    spec.hidden = std::move(hidden);
    spec.classes = 10;
    model = models::make_model(spec);
    params.resize(model->param_count());
    rng r(seed);
    model->init_params(params.data(), r);
    x.resize(n * spec.input_size());
    for (auto& v : x) v = static_cast<float>(r.uniform());
    labels.resize(n);
    for (auto& l : labels) l = static_cast<std::int32_t>(r.below(10));
  }

  // The first n rows.
  models::batch batch(std::size_t n) const {
    models::batch b;
    b.x = x.data();
    b.labels = labels.data();
    b.size = n;
    return b;
  }
  models::batch batch() const { return batch(rows); }
};

// |a - b| / |b| in double (0 when both are zero).
inline double relative_l2(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0.0, n = 0.0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    d += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    n += static_cast<double>(b[i]) * b[i];
  }
  return n > 0 ? std::sqrt(d / n) : std::sqrt(d);
}

}  // namespace troupe::devices::gpu::testing
