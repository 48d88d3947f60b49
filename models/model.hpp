#pragma once
// A device-agnostic model: an architecture over one flat parameter buffer with named views.
// Parameters live outside the model (on a parameter server shard, or a worker's replica); the
// model holds only scratch space for activations, so it is not thread-safe: one instance per
// device worker (use clone()).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "models/batch.hpp"
#include "models/layer_program.hpp"

namespace troupe::models {

struct param_view {
  std::string name;        // e.g. "fc1.weight"
  std::size_t offset = 0;  // in floats, into the flat buffer
  std::size_t size = 0;    // in floats
  std::vector<std::size_t> shape;
};

class param_layout {
 public:
  // Appends a tensor; returns its view (valid until the next add). Offsets are dense in insertion
  // order. Throws troupe::input_error on a duplicate name.
  const param_view& add(std::string name, std::vector<std::size_t> shape);
  const std::vector<param_view>& views() const { return views_; }
  // Throws troupe::input_error when absent.
  const param_view& find(const std::string& name) const;
  std::size_t size() const { return size_; }

 private:
  std::vector<param_view> views_;
  std::size_t size_ = 0;
};

// What a config asks for. input_shape is the dataset's sample shape ({C,H,W} or {D}).
struct model_spec {
  std::string kind;  // softmax | mlp | cnn | linear | a registered name
  std::vector<std::size_t> input_shape;
  std::size_t classes = 10;
  std::vector<std::size_t> hidden;  // mlp: widths; cnn: conv channels then fc widths
  // cnn only. How many leading entries of hidden are conv channels; 0 means all but the last
  // (at least one), so the default {16, 32, 128} reads as two convs and one fc layer.
  std::size_t conv_layers = 0;
  std::size_t kernel = 3;  // cnn only: odd conv kernel size, stride 1, 'same' padding

  // Floats per input row: the product of input_shape.
  std::size_t input_size() const {
    std::size_t n = 1;
    for (auto d : input_shape) n *= d;
    return n;
  }
};

class model {
 public:
  virtual ~model() = default;
  virtual std::string kind() const = 0;
  virtual const param_layout& layout() const = 0;
  std::size_t param_count() const { return layout().size(); }

  // Fills params (param_count floats) with the model's initialisation, deterministically from r.
  virtual void init_params(float* params, rng& r) const = 0;

  // Forward and backward over the batch. Overwrites grad_sum (param_count floats) with the SUM
  // over samples of the per-sample loss gradient, and returns loss and sample sums.
  virtual step_stats forward_backward(const float* params, const batch& b, float* grad_sum) = 0;

  // Forward only: loss and accuracy sums.
  virtual step_stats evaluate(const float* params, const batch& b) = 0;

  // A new instance with the same architecture and its own scratch space.
  virtual std::unique_ptr<model> clone() const = 0;

  // The model's layers described for a backend that runs its own kernels (see
  // layer_program.hpp); null for a model that only runs its own code (such a model runs on cpu
  // and sim devices only).
  virtual const layer_program* program() const { return nullptr; }
};

using model_factory = std::function<std::unique_ptr<model>(const model_spec&)>;

// Built-in kinds are registered on first use; embedding apps add their own.
void register_model(const std::string& kind, model_factory factory);
// Throws troupe::input_error naming the kind when it is unknown or the spec does not fit.
std::unique_ptr<model> make_model(const model_spec& spec);
std::vector<std::string> model_kinds();

}  // namespace troupe::models
