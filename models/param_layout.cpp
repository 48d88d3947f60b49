#include <functional>
#include <numeric>

#include "core/error.hpp"
#include "models/model.hpp"

namespace troupe::models {

const param_view& param_layout::add(std::string name, std::vector<std::size_t> shape) {
  for (const auto& v : views_)
    if (v.name == name) throw input_error("parameter '" + name + "' is declared twice");
  param_view v;
  v.name = std::move(name);
  v.offset = size_;
  v.size = std::accumulate(shape.begin(), shape.end(), std::size_t{1}, std::multiplies<>());
  v.shape = std::move(shape);
  size_ += v.size;
  views_.push_back(std::move(v));
  return views_.back();
}

const param_view& param_layout::find(const std::string& name) const {
  for (const auto& v : views_)
    if (v.name == name) return v;
  throw input_error("no parameter named '" + name + "'");
}

}  // namespace troupe::models
