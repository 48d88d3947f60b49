#include "models/layers/loss.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"

namespace troupe::models::layers {

step_stats softmax_cross_entropy(const float* logits, const std::int32_t* labels,
                                 const float* weights, std::size_t n, std::size_t k, float* dlogits,
                                 float* sample_loss) {
  step_stats st;
  st.samples = n;
  for (std::size_t i = 0; i < n; ++i) {
    const float* z = logits + i * k;
    const std::int32_t label = labels[i];
    if (label < 0 || static_cast<std::size_t>(label) >= k)
      throw input_error("label " + std::to_string(label) + " is outside [0, " + std::to_string(k) +
                        ") for a " + std::to_string(k) + "-class model");
    std::size_t arg = 0;
    for (std::size_t j = 1; j < k; ++j)
      if (z[j] > z[arg]) arg = j;
    const float zmax = z[arg];
    double sum = 0.0;
    for (std::size_t j = 0; j < k; ++j) sum += std::exp(static_cast<double>(z[j] - zmax));
    const double lse = std::log(sum);  // log sum exp(z - zmax)
    const double w = weights ? weights[i] : 1.0;
    const double li = lse - static_cast<double>(z[label] - zmax);
    st.loss_sum += w * li;
    if (sample_loss) sample_loss[i] = static_cast<float>(li);
    if (arg == static_cast<std::size_t>(label)) ++st.correct;
    if (dlogits) {
      float* g = dlogits + i * k;
      const double scale = w / sum;
      for (std::size_t j = 0; j < k; ++j)
        g[j] = static_cast<float>(scale * std::exp(static_cast<double>(z[j] - zmax)));
      g[label] -= static_cast<float>(w);
    }
  }
  return st;
}

step_stats squared_error(const float* y, const float* targets, const float* weights, std::size_t n,
                         float* dy, float* sample_loss) {
  step_stats st;
  st.samples = n;
  for (std::size_t i = 0; i < n; ++i) {
    const double w = weights ? weights[i] : 1.0;
    const double r = static_cast<double>(y[i]) - targets[i];
    st.loss_sum += 0.5 * w * r * r;
    if (sample_loss) sample_loss[i] = static_cast<float>(0.5 * r * r);
    if (dy) dy[i] = static_cast<float>(w * r);
  }
  return st;
}

}  // namespace troupe::models::layers
