#pragma once
// Optimizers over a contiguous range of parameters (the whole model on a replica, or one
// parameter-server shard's slice). The gradient handed to step() is the MEAN gradient of the
// global batch. Each instance owns its state (moments), sized at construction.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace troupe::models {

struct optimizer_spec {
  std::string kind = "sgd";  // sgd | momentum | adam | adamw | adabelief | max-adabelief
  double lr = 0.01;
  double momentum = 0.9;      // momentum
  bool nesterov = false;      // momentum
  double beta1 = 0.9;         // adam family
  double beta2 = 0.999;       // adam family
  double eps = 1e-8;          // adam family (adabelief: added inside s_t as in the paper)
  double weight_decay = 0.0;  // sgd/momentum/adam: L2 added to the gradient; adamw: decoupled
};

// Named state buffers, for checkpoints and for the distributed optimizer forms.
struct optimizer_state {
  std::int64_t step = 0;
  std::vector<std::string> names;
  std::vector<std::vector<float>> buffers;
};

class optimizer {
 public:
  virtual ~optimizer() = default;
  virtual std::string kind() const = 0;
  // Applies one update in place. params and grad have the size given at construction.
  virtual void step(float* params, const float* grad) = 0;
  // step() in parts, so that the threads of several workers apply one replica together:
  // begin_step() once, then update() over disjoint ranges that cover [0, size()), from any
  // threads in any order (params and grad are the whole arrays; the range is [lo, lo + n)). The
  // bits are step()'s: every element's update reads only that element's state.
  virtual void begin_step() = 0;
  virtual void update(float* params, const float* grad, std::size_t lo, std::size_t n) = 0;
  virtual std::size_t size() const = 0;
  virtual std::int64_t steps_taken() const = 0;
  virtual optimizer_state state() const = 0;
  // Throws troupe::input_error when names or sizes do not match.
  virtual void load_state(const optimizer_state& s) = 0;
};

// Throws troupe::input_error naming the kind or key when the spec is invalid.
std::unique_ptr<optimizer> make_optimizer(const optimizer_spec& spec, std::size_t size);

}  // namespace troupe::models
