#pragma once
// The buffers and passes of one layer program on one backend, sized for max_batch rows: the
// forward pass, the loss, the backward pass, and the graphs that replay them. program and
// resident_trainer (gpu_program.hpp) decide what is copied in and out around these passes.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "devices/cuda/gpu_backend.cuh"
#include "devices/cuda/gpu_kernels.cuh"
#include "devices/cuda/gpu_program.hpp"

namespace troupe::devices::gpu {

class engine {
 public:
  engine(const models::layer_program& p, const program_options& o);
  ~engine();
  engine(const engine&) = delete;
  engine& operator=(const engine&) = delete;

  // Each pass enqueues on the backend's stream (runs at once on the host target).
  void forward(std::size_t n);
  // Per-sample loss and correctness into raw/correct, the output gradient when with_grad, and
  // their sums added to acc. weighted: the weights buffer holds per-sample weights.
  void loss(std::size_t n, bool with_grad, bool weighted);
  void backward(std::size_t n);
  void forward_layer(std::size_t i, std::size_t n);
  void backward_layer(std::size_t i, std::size_t n);
  // Seconds each layer took, forward and backward (the loss with the last layer), over n rows
  // already in x: the layer split's cost model. Synchronises after every layer.
  std::vector<double> layer_seconds(std::size_t n, bool weighted);
  // Zeroes acc (loss sum, correct count).
  void clear_stats();

  // Runs enqueue() directly, or, with graphs on, captures it once per key and replays it.
  void run(std::uint64_t key, const std::function<void()>& enqueue);

  std::size_t max_batch() const { return max_batch_; }
  const models::layer_program& layers() const { return p_; }

  backend be;
  buffer<float> params, grad;   // param_count
  buffer<float> x;              // max_batch * input_size: the batch's rows
  buffer<std::int32_t> labels;  // max_batch
  buffer<float> targets;        // max_batch
  buffer<float> weights;        // max_batch
  buffer<float> raw, correct;   // per sample: the unweighted loss, 1 where the argmax is right
  buffer<double> acc;           // {loss sum, correct}
  buffer<float> input_grad;     // max_batch * input_size, with program_options::input_grad

 private:
  struct layer_buffers {
    buffer<float> act, grad;   // max_batch * out
    buffer<float> col;         // conv: c*k*k * max_batch*h*w
    buffer<std::int32_t> arg;  // maxpool: max_batch * out
  };
  const float* input_of(std::size_t i) const;
  void bias_grad(const kernels::dense_bias_grad& k);

  models::layer_program p_;
  std::size_t max_batch_;
  bool graphs_;
  std::vector<layer_buffers> layers_;
  buffer<float> cnhw_;  // conv: cout * max_batch*h*w, the GEMM's output and dy's transpose
  buffer<float> dcol_;  // conv: c*k*k * max_batch*h*w
  buffer<float> ones_;  // conv: for the bias gradients' row sums
  std::map<std::uint64_t, void*> graphs_by_key_;  // cudaGraphExec_t
};

}  // namespace troupe::devices::gpu
