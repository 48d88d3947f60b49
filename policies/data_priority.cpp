#include "policies/data_priority.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace troupe::policies {

namespace {
void validate(const priority_options& o) {
  if (!(o.alpha >= 0.0) || !(o.beta >= 0.0))
    throw input_error("data priority: alpha and beta must be >= 0");
  if (!(o.uniform_mix >= 0.0 && o.uniform_mix <= 1.0))
    throw input_error("data priority: uniform_mix must be in [0, 1]");
  if (!(o.epsilon > 0.0) || !(o.staleness_boost >= 0.0) || !(o.staleness_horizon > 0.0))
    throw input_error("data priority: epsilon and staleness_horizon must be > 0, boost >= 0");
}
}  // namespace

std::vector<double> priority_scores(const std::vector<double>& loss,
                                    const std::vector<double>& staleness,
                                    const priority_options& o) {
  validate(o);
  if (loss.size() != staleness.size())
    throw input_error("priority_scores: " + std::to_string(loss.size()) + " losses but " +
                      std::to_string(staleness.size()) + " staleness values");
  double max_loss = 0.0;
  bool any_seen = false;
  for (double l : loss) {
    if (std::isnan(l)) continue;
    if (!std::isfinite(l)) throw input_error("priority_scores: infinite loss");
    max_loss = std::max(max_loss, std::abs(l));
    any_seen = true;
  }
  if (!any_seen) max_loss = 1.0;  // nothing seen yet: all equal
  std::vector<double> out(loss.size());
  for (std::size_t i = 0; i < loss.size(); ++i) {
    if (!(staleness[i] >= 0.0) || !std::isfinite(staleness[i]))
      throw input_error("priority_scores: staleness of sample " + std::to_string(i) +
                        " must be finite and >= 0");
    const double l = std::isnan(loss[i]) ? max_loss : std::abs(loss[i]);
    const double stale = 1.0 - std::exp(-staleness[i] / o.staleness_horizon);
    out[i] = (l + o.epsilon) * (1.0 + o.staleness_boost * stale);
  }
  return out;
}

std::vector<double> sampling_probabilities(const std::vector<double>& scores, double alpha,
                                           double uniform_mix) {
  if (scores.empty()) throw input_error("sampling_probabilities: no samples");
  if (!(alpha >= 0.0)) throw input_error("sampling_probabilities: alpha must be >= 0");
  if (!(uniform_mix >= 0.0 && uniform_mix <= 1.0))
    throw input_error("sampling_probabilities: uniform_mix must be in [0, 1]");
  const double n = double(scores.size());
  std::vector<double> p(scores.size());
  double sum = 0.0;
  for (std::size_t i = 0; i < scores.size(); ++i) {
    if (!(scores[i] >= 0.0) || !std::isfinite(scores[i]))
      throw input_error("sampling_probabilities: score " + std::to_string(i) +
                        " must be finite and >= 0");
    // alpha = 0 means uniform even for zero scores (pow(0, 0) would be 1 anyway; be explicit).
    p[i] = alpha == 0.0 ? 1.0 : std::pow(scores[i], alpha);
    sum += p[i];
  }
  if (!(sum > 0.0)) {
    if (uniform_mix < 1.0) throw input_error("sampling_probabilities: all scores are zero");
    sum = 1.0;  // the uniform part carries everything
  }
  for (auto& v : p) v = (1.0 - uniform_mix) * v / sum + uniform_mix / n;
  return p;
}

std::vector<double> importance_weights(const std::vector<double>& probabilities, double beta,
                                       bool normalize) {
  if (!(beta >= 0.0)) throw input_error("importance_weights: beta must be >= 0");
  const double n = double(probabilities.size());
  std::vector<double> w(probabilities.size());
  double max_w = 0.0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (!(probabilities[i] > 0.0))
      throw input_error("importance_weights: sample " + std::to_string(i) +
                        " has probability 0 and can never be drawn; use uniform_mix > 0");
    w[i] = std::pow(n * probabilities[i], -beta);
    max_w = std::max(max_w, w[i]);
  }
  if (normalize)
    for (auto& v : w) v /= max_w;
  return w;
}

alias_sampler::alias_sampler(const std::vector<double>& probabilities) {
  const std::size_t n = probabilities.size();
  if (n == 0) throw input_error("alias_sampler: no outcomes");
  double sum = 0.0;
  for (double p : probabilities) {
    if (!(p >= 0.0) || !std::isfinite(p))
      throw input_error("alias_sampler: probabilities must be finite and >= 0");
    sum += p;
  }
  if (!(sum > 0.0)) throw input_error("alias_sampler: probabilities sum to zero");
  accept_.assign(n, 1.0);
  alias_.resize(n);
  std::vector<double> scaled(n);
  std::vector<std::size_t> small, large;
  for (std::size_t i = 0; i < n; ++i) {
    alias_[i] = i;
    scaled[i] = probabilities[i] * double(n) / sum;
    (scaled[i] < 1.0 ? small : large).push_back(i);
  }
  // Vose: pair each under-full column with an over-full one that tops it up.
  while (!small.empty() && !large.empty()) {
    const std::size_t s = small.back(), l = large.back();
    small.pop_back();
    accept_[s] = scaled[s];
    alias_[s] = l;
    scaled[l] -= 1.0 - scaled[s];
    if (scaled[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  // Leftovers are 1 up to rounding: always accept.
  for (auto i : small) accept_[i] = 1.0;
  for (auto i : large) accept_[i] = 1.0;
}

std::size_t alias_sampler::draw(rng& r) const {
  const std::size_t column = r.below(accept_.size());
  return r.uniform() < accept_[column] ? column : alias_[column];
}

std::vector<std::size_t> alias_sampler::draw_batch(std::size_t k, rng& r) const {
  std::vector<std::size_t> out(k);
  for (auto& i : out) i = draw(r);
  return out;
}

priority_sampler::priority_sampler(const std::vector<double>& loss,
                                   const std::vector<double>& staleness,
                                   const priority_options& options)
    : probabilities_(sampling_probabilities(priority_scores(loss, staleness, options),
                                            options.alpha, options.uniform_mix)),
      weights_(importance_weights(probabilities_, options.beta, true)),
      alias_(probabilities_) {}

priority_batch priority_sampler::draw(std::size_t k, rng& r) const {
  priority_batch b;
  b.indices = alias_.draw_batch(k, r);
  b.weights.reserve(k);
  for (auto i : b.indices) b.weights.push_back(weights_[i]);
  return b;
}

}  // namespace troupe::policies
