#pragma once
// A model that is a chain of stages (dense, conv, pool) ending in a loss. The built-in kinds are
// all sequential; a registered custom kind can use it too. Activations and gradients live in
// member scratch buffers that grow to the largest batch seen and are then reused, so a step
// allocates nothing once a batch size has been seen.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/layer_program.hpp"
#include "models/layers/conv.hpp"
#include "models/model.hpp"

namespace troupe::models {

// One link of the chain. Stages record their parameter offsets when constructed.
class stage {
 public:
  virtual ~stage() = default;
  virtual std::size_t out_size() const = 0;  // floats per sample
  virtual void init(float* params, rng& r) const = 0;
  virtual void forward(const float* params, const float* x, float* y, std::size_t n) = 0;
  // dy may be clobbered; dx null means the input gradient is not needed. Overwrites this stage's
  // slice of grad.
  virtual void backward(const float* params, const float* x, const float* y, float* dy, float* dx,
                        float* grad, std::size_t n) = 0;
  // A stage may run itself and the stage after it together, sample by sample, so that its output
  // is still in cache when the next stage reads it (and, backward, the next stage's input
  // gradient when this one reads it). The results are the same as running them one after the
  // other; y and dy are still filled in whole.
  virtual bool fuses_next() const { return false; }
  virtual void forward_fused(const float*, const float*, float*, float*, std::size_t) {}
  // dnext: the gradient of the next stage's output; dy: this stage's output gradient, filled in.
  virtual void backward_fused(const float*, const float*, const float*, float*, float*, float*,
                              float*, std::size_t) {}
};

class sequential final : public model {
 public:
  // rebuild makes a fresh instance from spec, for clone().
  using rebuild_fn = std::unique_ptr<model> (*)(const model_spec&);

  sequential(std::string kind, model_spec spec, rebuild_fn rebuild);

  // Builders: each appends after the current output shape. name prefixes the views, e.g. "fc1".
  void add_dense(const std::string& name, std::size_t out, bool relu, double init_gain);
  void add_conv(const std::string& name, std::size_t cout, std::size_t k, bool relu);
  void add_maxpool2();
  void set_loss(loss_kind l) {
    loss_ = l;
    program_.loss = l;
  }

  // Current output shape while building: {C,H,W} while spatial, else {features}.
  const std::vector<std::size_t>& shape() const { return shape_; }

  std::string kind() const override { return kind_; }
  const param_layout& layout() const override { return layout_; }
  void init_params(float* params, rng& r) const override;
  step_stats forward_backward(const float* params, const batch& b, float* grad_sum) override;
  step_stats evaluate(const float* params, const batch& b) override;
  std::unique_ptr<model> clone() const override { return rebuild_(spec_); }
  const layer_program* program() const override { return &program_; }

  // The first `k` layers only, for a device that runs the rest of the chain elsewhere (the cuda
  // backend's layer split). forward_prefix returns the output of layer k - 1 (x when k is 0),
  // valid until the next call. backward_prefix takes dLoss/d(that output) and overwrites the
  // gradient slices of layers 0..k-1, leaving the others' untouched; it needs the activations of
  // the forward_prefix just before it.
  const float* forward_prefix(const float* params, const float* x, std::size_t n, std::size_t k);
  void backward_prefix(const float* params, const float* x, std::size_t n, std::size_t k,
                       const float* d_out, float* grad_sum);
  // Seconds each layer took, forward and backward together, in one step over the batch (the
  // layer split's cost model). Overwrites grad_sum.
  std::vector<double> layer_seconds(const float* params, const batch& b, float* grad_sum);

  // evaluate() works through large batches in chunks of this many samples, bounding scratch.
  static constexpr std::size_t eval_chunk = 256;

 private:
  std::size_t flat() const;
  void record(const layer_op& op);
  const float* forward(const float* params, const float* x, std::size_t n);
  // The first k stages forward, and k stages backward from grads_[k - 1]; `seconds`, when set,
  // adds each stage's time (layer_seconds).
  const float* run_forward(const float* params, const float* x, std::size_t n, std::size_t k,
                           std::vector<double>* seconds);
  void size_grads(std::size_t n, std::size_t k);
  void run_backward(const float* params, const float* x, std::size_t n, std::size_t k,
                    float* grad_sum, std::vector<double>* seconds);
  step_stats loss(const float* out, const batch& b, std::size_t first, std::size_t n, float* dout);

  std::string kind_;
  model_spec spec_;
  rebuild_fn rebuild_;
  param_layout layout_;
  std::vector<std::size_t> shape_;
  std::vector<std::unique_ptr<stage>> stages_;
  loss_kind loss_ = loss_kind::softmax_cross_entropy;
  std::vector<std::vector<float>> acts_;   // acts_[i]: output of stage i
  std::vector<std::vector<float>> grads_;  // grads_[i]: dLoss/d(output of stage i)
  layer_program program_;                  // the same chain, described for other backends
};

}  // namespace troupe::models
