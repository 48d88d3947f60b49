#include "policies/time_model.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace troupe::policies {

time_model::time_model(time_model_options options) : options_(options) {
  if (!(options_.forgetting > 0.0 && options_.forgetting <= 1.0))
    throw input_error("time_model: forgetting must be in (0, 1], got " +
                      std::to_string(options_.forgetting));
  if (!(options_.prior_intercept >= 0.0) || !std::isfinite(options_.prior_intercept))
    throw input_error("time_model: prior_intercept must be finite and >= 0");
  if (!(options_.prior_cap >= 0.0 && options_.prior_cap < 1.0))
    throw input_error("time_model: prior_cap must be in [0, 1)");
  if (!(options_.min_relative_spread >= 0.0))
    throw input_error("time_model: min_relative_spread must be >= 0");
}

void time_model::observe(double batch, double seconds) {
  if (!(batch > 0.0) || !std::isfinite(batch))
    throw input_error("time_model: batch must be finite and > 0, got " + std::to_string(batch));
  if (!(seconds >= 0.0) || !std::isfinite(seconds))
    throw input_error("time_model: seconds must be finite and >= 0, got " +
                      std::to_string(seconds));
  const double l = options_.forgetting;
  weight_ = l * weight_ + 1.0;
  sb_ = l * sb_ + batch;
  sbb_ = l * sbb_ + batch * batch;
  st_ = l * st_ + seconds;
  sbt_ = l * sbt_ + batch * seconds;
  ++count_;
}

bool time_model::slope_identified() const {
  if (!ready()) return false;
  const double mb = sb_ / weight_;
  // Centered second moment; clamp the cancellation error of sbb/W - mb^2 at zero.
  const double var_b = std::max(0.0, sbb_ / weight_ - mb * mb);
  return std::sqrt(var_b) >= options_.min_relative_spread * mb && var_b > 0.0;
}

linear_time time_model::fit() const {
  if (!ready()) throw input_error("time_model: no observation yet");
  const double mb = sb_ / weight_;
  const double mt = st_ / weight_;
  if (!slope_identified()) {
    const double a = std::min(options_.prior_intercept, options_.prior_cap * mt);
    linear_time m{a, (mt - a) / mb};
    // All observed times zero: keep a tiny positive slope so that splits stay defined.
    if (!(m.c > 0.0)) m.c = 1e-12;
    return m;
  }
  const double var_b = sbb_ / weight_ - mb * mb;
  const double cov_bt = sbt_ / weight_ - mb * mt;
  linear_time m{0.0, cov_bt / var_b};
  m.a = mt - m.c * mb;
  if (!(m.c > 0.0) || m.a < 0.0) {
    m.a = 0.0;
    m.c = sbt_ / sbb_;
    if (!(m.c > 0.0)) m.c = 1e-12;
  }
  return m;
}

}  // namespace troupe::policies
