#include <cmath>
#include <iterator>
#include <string>

#include "core/error.hpp"
#include "core/kinds.hpp"
#include "models/optimizer_base.hpp"

namespace troupe::models {

optimizer_base::optimizer_base(std::string kind, const optimizer_spec& spec, std::size_t size,
                               std::vector<std::string> buffer_names)
    : kind_(std::move(kind)),
      spec_(spec),
      size_(size),
      names_(std::move(buffer_names)),
      buffers_(names_.size(), std::vector<float>(size, 0.0f)) {}

optimizer_state optimizer_base::state() const {
  optimizer_state s;
  s.step = step_;
  s.names = names_;
  s.buffers = buffers_;
  return s;
}

void optimizer_base::load_state(const optimizer_state& s) {
  const std::string who = "optimizer '" + kind_ + "' state: ";
  if (s.step < 0) throw input_error(who + "negative step " + std::to_string(s.step));
  if (s.names != names_ || s.buffers.size() != names_.size()) {
    std::string want;
    for (const auto& n : names_) want += (want.empty() ? "" : ", ") + n;
    throw input_error(who + "buffers do not match (expected: " + want + ")");
  }
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (s.buffers[i].size() != size_)
      throw input_error(who + "buffer '" + names_[i] + "' has " +
                        std::to_string(s.buffers[i].size()) + " floats, expected " +
                        std::to_string(size_));
  step_ = s.step;
  buffers_ = s.buffers;
}

namespace {

void check(bool ok, const optimizer_spec& spec, const std::string& key, double value,
           const std::string& rule) {
  if (!ok)
    throw input_error("optimizer '" + spec.kind + "': " + key + " must be " + rule + ", got " +
                      std::to_string(value));
}

void validate(const optimizer_spec& s) {
  check(std::isfinite(s.lr) && s.lr >= 0, s, "lr", s.lr, "finite and >= 0");
  check(s.momentum >= 0 && s.momentum < 1, s, "momentum", s.momentum, "in [0, 1)");
  check(s.beta1 >= 0 && s.beta1 < 1, s, "beta1", s.beta1, "in [0, 1)");
  check(s.beta2 >= 0 && s.beta2 < 1, s, "beta2", s.beta2, "in [0, 1)");
  check(std::isfinite(s.eps) && s.eps >= 0, s, "eps", s.eps, "finite and >= 0");
  check(std::isfinite(s.weight_decay) && s.weight_decay >= 0, s, "weight_decay", s.weight_decay,
        "finite and >= 0");
}

}  // namespace

std::unique_ptr<optimizer> make_optimizer(const optimizer_spec& spec, std::size_t size) {
  // One factory per kind of the config's closed set (core/kinds.hpp), in its order: a kind
  // added there and not here fails to compile rather than at a user's run.
  using factory = std::unique_ptr<optimizer> (*)(const optimizer_spec&, std::size_t);
  static constexpr factory factories[] = {
      optimizers::make_sgd,   optimizers::make_momentum,  optimizers::make_adam,
      optimizers::make_adamw, optimizers::make_adabelief, optimizers::make_max_adabelief};
  static_assert(std::size(factories) ==
                static_cast<std::size_t>(optimizer_kind::max_adabelief) + 1);
  const auto kind = parse_name<optimizer_kind>(spec.kind);
  if (!kind)
    throw input_error("unknown optimizer kind '" + spec.kind +
                      "' (known: " + names_listed<optimizer_kind>() + ")");
  validate(spec);
  return factories[static_cast<std::size_t>(*kind)](spec, size);
}

}  // namespace troupe::models
