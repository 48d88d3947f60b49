#pragma once
// A sequential model's training step on a GPU, built from its layer program (cuBLAS GEMMs for the
// dense layers and the convolutions' im2col products, kernels for everything else). Two users:
//
//   program           parameters and rows come from host memory and the gradient sum goes back
//                     to it: the cuda device that the runtime's workers call.
//   resident_trainer  the training set, parameters and optimizer state stay on the GPU, and each
//                     batch size's whole step (gather, forward, backward, optimizer) is one CUDA
//                     graph: `troupe bench train --device cuda`, where a small model's step is
//                     bound by kernel launches, not by arithmetic.
//
// target::host runs the same kernels as host loops and the same GEMMs through OpenBLAS, for tests
// on machines without a GPU. No CUDA header is needed to use this one.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "models/batch.hpp"
#include "models/layer_program.hpp"
#include "models/optimizer.hpp"

namespace troupe::devices::gpu {

enum class target { host, cuda };

struct program_options {
  target where = target::cuda;
  int ordinal = 0;              // CUDA device index
  std::size_t max_batch = 256;  // rows per forward/backward; evaluation goes in chunks of this
  bool graphs = false;          // replay each batch size's step as one CUDA graph
  bool input_grad = false;      // also compute dLoss/d(input): the layers before run elsewhere
};

class engine;

// The layers from `first` on, as a program of their own: its input is layer first - 1's output,
// its parameter offsets still index the whole model's buffer. Throws troupe::input_error when
// first is past the last layer.
models::layer_program slice(const models::layer_program& p, std::size_t first);
class resident_state;

class program {
 public:
  // Throws troupe::input_error when the program has a layer or loss the backend lacks, and
  // troupe::runtime_failure with the CUDA error's text when the GPU refuses (no device, no
  // memory).
  program(const models::layer_program& p, const program_options& o);
  ~program();  // not copied: it owns its engine (e_) alone

  // As models::model::forward_backward: grad_sum gets the sum over the batch's samples. A batch
  // larger than max_batch grows the buffers. Only the gradient of this program's layers is
  // written (all of it for a whole model's program; see slice()). d_input, with
  // program_options::input_grad: dLoss/d(the batch's rows), b.size x input_size floats.
  models::step_stats step(const float* params, const models::batch& b, float* grad_sum,
                          float* d_input = nullptr);
  models::step_stats evaluate(const float* params, const models::batch& b);
  // Seconds each layer took, forward and backward, in one step over b (synchronised per layer).
  std::vector<double> layer_seconds(const float* params, const models::batch& b);
  // What a copy between the host and this program's device costs: seconds = latency +
  // bytes * per_byte, measured now (a 4-byte and an 8 MiB copy each way).
  struct transfer_cost {
    double latency = 0.0, per_byte = 0.0;
  };
  transfer_cost measure_transfers();

 private:
  void fit(std::size_t rows);
  models::layer_program layers_;
  std::size_t param_begin_ = 0;  // the first parameter of these layers
  program_options options_;
  std::unique_ptr<engine> e_;
};

struct trainer_options : program_options {
  models::optimizer_spec optimizer;  // sgd, momentum, adam or adamw
};

class resident_trainer {
 public:
  // Copies the training set (rows x the program's input size, and the labels) to the GPU.
  resident_trainer(const models::layer_program& p, const trainer_options& o, const float* x,
                   const std::int32_t* labels, std::size_t rows);
  ~resident_trainer();
  resident_trainer(const resident_trainer&) = delete;
  resident_trainer& operator=(const resident_trainer&) = delete;

  void set_params(const float* params);
  void get_params(float* params) const;
  // The rows of the coming steps, in order (an epoch's permutation); the cursor restarts at 0.
  void set_order(const std::vector<std::int64_t>& rows);
  // Queues one step over the next n rows of the order; returns before it ran.
  void step(std::size_t n);
  // Waits for the queued steps; their loss and sample sums since the last call.
  models::step_stats take_stats();
  // Forward only over host rows, in chunks of max_batch.
  models::step_stats evaluate(const float* x, const std::int32_t* labels, std::size_t rows);
  std::int64_t steps_taken() const { return steps_; }

 private:
  std::unique_ptr<engine> e_;
  std::unique_ptr<resident_state> st_;  // on e_'s backend: declared after it, freed before it
  models::optimizer_spec optimizer_;
  std::int64_t steps_ = 0;
  std::size_t queued_samples_ = 0;
  std::size_t order_size_ = 0, order_used_ = 0;
};

}  // namespace troupe::devices::gpu
