#pragma once
// Shared plumbing of the built-in optimizers: the step counter and named state buffers, with the
// checks load_state() needs. Each family adds only its update rule.
#include <string>
#include <vector>

#include "models/optimizer.hpp"

namespace troupe::models {

class optimizer_base : public optimizer {
 public:
  optimizer_base(std::string kind, const optimizer_spec& spec, std::size_t size,
                 std::vector<std::string> buffer_names);

  std::string kind() const override { return kind_; }
  std::size_t size() const override { return size_; }
  std::int64_t steps_taken() const override { return step_; }
  // The families give begin_step() and update(); a whole step is those two.
  void step(float* params, const float* grad) final {
    begin_step();
    update(params, grad, 0, size_);
  }
  void begin_step() override { ++step_; }
  optimizer_state state() const override;
  void load_state(const optimizer_state& s) override;

 protected:
  float* buffer(std::size_t i) { return buffers_[i].data(); }

  std::string kind_;
  optimizer_spec spec_;
  std::size_t size_;
  std::int64_t step_ = 0;
  std::vector<std::string> names_;
  std::vector<std::vector<float>> buffers_;
};

namespace optimizers {
// One factory per family; make_optimizer validates the spec first.
std::unique_ptr<optimizer> make_sgd(const optimizer_spec& spec, std::size_t size);
std::unique_ptr<optimizer> make_momentum(const optimizer_spec& spec, std::size_t size);
std::unique_ptr<optimizer> make_adam(const optimizer_spec& spec, std::size_t size);
std::unique_ptr<optimizer> make_adamw(const optimizer_spec& spec, std::size_t size);
std::unique_ptr<optimizer> make_adabelief(const optimizer_spec& spec, std::size_t size);
std::unique_ptr<optimizer> make_max_adabelief(const optimizer_spec& spec, std::size_t size);
}  // namespace optimizers

}  // namespace troupe::models
