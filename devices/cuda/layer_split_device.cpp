#include "devices/cuda/layer_split_device.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "devices/cpu_device.hpp"
#include "devices/cuda/gpu_program.hpp"
#include "devices/layer_split_plan.hpp"
#include "devices/timed_compute.hpp"
#include "models/sequential.hpp"

namespace troupe::devices {
namespace {

std::string layer_name(const models::layer_op& op, std::size_t i) {
  switch (op.op) {
    case models::layer_op::kind::dense:
      return "dense" + std::to_string(i);
    case models::layer_op::kind::conv:
      return "conv" + std::to_string(i);
    case models::layer_op::kind::maxpool2:
      return "pool" + std::to_string(i);
  }
  return std::to_string(i);
}

class layer_split_device final : public device {
 public:
  layer_split_device(const device_spec& spec, bool host_only)
      : name_(spec.name),
        ordinal_(spec.ordinal),
        threads_(spec.threads),
        want_(spec.layer_split),
        where_(host_only ? gpu::target::host : gpu::target::cuda) {
    if (threads_ < 1) throw input_error("device '" + name_ + "': threads must be >= 1");
  }

  device_kind kind() const override { return device_kind::cuda; }
  const std::string& name() const override { return name_; }
  double capability() const override { return 20.0; }
  std::string placement() const override { return placement_; }

  models::step_stats run_step(models::model& m, const float* params, const models::batch& b,
                              float* grad_sum, step_timing* timing) override {
    auto& seq = prepare(m, params, b);
    set_blas_threads(threads_);
    return timed_compute(timing, [&]() -> models::step_stats {
      const std::size_t L = layers_.layers.size();
      if (cut_ == 0) return whole_->step(params, b, grad_sum);
      if (cut_ == L) return seq.forward_backward(params, b, grad_sum);
      const std::size_t n = b.size;
      models::batch up = b;
      up.x = seq.forward_prefix(params, b.x, n, cut_);
      d_act_.resize(n * layers_.layers[cut_].in);
      const auto stats = suffix_->step(params, up, grad_sum, d_act_.data());
      seq.backward_prefix(params, b.x, n, cut_, d_act_.data(), grad_sum);
      return stats;
    });
  }

  models::step_stats run_eval(models::model& m, const float* params, const models::batch& b,
                              step_timing* timing) override {
    return timed_compute(timing, [&] { return whole_for(m).evaluate(params, b); });
  }

 private:
  gpu::program_options options(bool input_grad) const {
    gpu::program_options o;
    o.where = where_;
    o.ordinal = ordinal_;
    o.input_grad = input_grad;
    return o;
  }

  // The whole model's program (evaluation, and the GPU's side of the timing), one per model.
  gpu::program& whole_for(models::model& m) {
    if (whole_ && whole_model_ == &m) return *whole_;
    if (!m.program()) throw input_error("device '" + name_ + "': the model has no layer program");
    whole_ = std::make_unique<gpu::program>(*m.program(), options(false));
    whole_model_ = &m;
    return *whole_;
  }

  // The first step of a model: time both devices and the copies, and cut.
  models::sequential& prepare(models::model& m, const float* params, const models::batch& b) {
    auto* seq = dynamic_cast<models::sequential*>(&m);
    if (!seq || !m.program())
      throw input_error("device '" + name_ + "': model kind '" + m.kind() +
                        "' is not a chain of layers, so its layers cannot be split");
    if (model_ == &m && decided_) return *seq;
    model_ = &m;
    layers_ = *m.program();
    const std::size_t L = layers_.layers.size();
    auto& whole = whole_for(m);
    set_blas_threads(threads_);
    std::vector<float> scratch(layers_.param_count);
    layer_split_inputs in;
    // Each measured twice, the second kept: the first pays for first touches and allocations.
    for (int rep = 0; rep < 2; ++rep) {
      in.cpu_seconds = seq->layer_seconds(params, b, scratch.data());
      in.gpu_seconds = whole.layer_seconds(params, b);
    }
    const auto copies = whole.measure_transfers();
    in.latency = copies.latency;
    in.per_byte = copies.per_byte;
    const double n = static_cast<double>(b.size);
    in.input_bytes = n * (static_cast<double>(layers_.input_size) + 1) * sizeof(float);
    for (std::size_t i = 0; i < L; ++i) {
      const auto& op = layers_.layers[i];
      in.names.push_back(layer_name(op, i + 1));
      in.out_bytes.push_back(n * static_cast<double>(op.out) * sizeof(float));
      double params_of = 0.0;
      if (op.op == models::layer_op::kind::dense)
        params_of = static_cast<double>(op.in * op.out + op.out);
      else if (op.op == models::layer_op::kind::conv)
        params_of = static_cast<double>(op.conv.cout * op.conv.col_rows() + op.conv.cout);
      in.param_bytes.push_back(params_of * sizeof(float));
    }
    const auto plan = plan_layer_split(in);
    cut_ = want_ >= 0 ? std::min<std::size_t>(static_cast<std::size_t>(want_), L) : plan.cut;
    placement_ = "layer split on " + name_ + " over a batch of " + std::to_string(b.size) + ": " +
                 describe(plan, in.names, cut_);
    suffix_.reset();
    if (cut_ > 0 && cut_ < L)
      suffix_ = std::make_unique<gpu::program>(gpu::slice(layers_, cut_), options(true));
    decided_ = true;
    return *seq;
  }

  std::string name_;
  int ordinal_;
  int threads_;
  int want_;
  gpu::target where_;
  const models::model* model_ = nullptr;  // the one the cut was decided for
  const models::model* whole_model_ = nullptr;
  bool decided_ = false;
  models::layer_program layers_;
  std::size_t cut_ = 0;
  std::unique_ptr<gpu::program> whole_, suffix_;
  std::vector<float> d_act_;
  std::string placement_;
};

}  // namespace

std::unique_ptr<device> make_layer_split_device(const device_spec& spec, bool host_only) {
  return std::make_unique<layer_split_device>(spec, host_only);
}

}  // namespace troupe::devices
