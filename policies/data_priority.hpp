#pragma once
// Data priority: importance sampling of training samples with bias-correcting weights.
//
// Source: Schaul, Quan, Antonoglou, Silver, "Prioritized Experience Replay", ICLR 2016 (the
// proportional variant, its alpha / beta exponents and max-normalised weights); Katharopoulos &
// Fleuret, "Not All Samples Are Created Equal", ICML 2018 (loss-based importance sampling for
// supervised training).
//
// Score of sample i, from the loss it had when last seen and the steps since then (staleness):
//   score_i = (|loss_i| + eps) * (1 + boost * (1 - exp(-staleness_i / horizon))).
// A stale loss is an old guess, so a sample not seen for a while is revisited more often (at most
// (1 + boost) times its loss-based score). A sample never seen (loss NaN) gets the largest known
// loss, as PER gives new transitions the maximal priority, so every sample is tried once.
// Sampling probability, with a uniform floor so that no sample's probability goes to zero:
//   P_i = (1 - u) score_i^alpha / sum_k score_k^alpha + u / N.
// alpha = 0 is uniform sampling whatever the scores.
// Importance weights (sampling with replacement):
//   w_i = (N P_i)^(-beta) / max_k (N P_k)^(-beta).
// With beta = 1 the raw weight (N P_i)^(-1) makes the estimator unbiased:
//   E_{i ~ P}[ f_i / (N P_i) ] = sum_i P_i f_i / (N P_i) = (1/N) sum_i f_i.
// Dividing by the max weight only rescales every step by one constant (<= 1), which keeps updates
// bounded, as in PER; the trainer's learning rate absorbs it.
// Sampler: Walker's alias method (Vose's construction): O(N) build, O(1) per draw, deterministic
// for a given troupe::rng stream.
#include <cstddef>
#include <vector>

#include "core/rng.hpp"

namespace troupe::policies {

struct priority_options {
  double alpha = 0.6;               // priority exponent; 0 = uniform
  double beta = 0.4;                // correction exponent; 1 = fully unbiased
  double uniform_mix = 0.01;        // u: share of probability spread uniformly, [0, 1]
  double epsilon = 1e-6;            // keeps zero-loss samples drawable
  double staleness_boost = 1.0;     // boost >= 0
  double staleness_horizon = 1000;  // steps, > 0
};

// Scores from per-sample losses (NaN = never seen) and staleness in steps (>= 0). Sizes must match.
std::vector<double> priority_scores(const std::vector<double>& loss,
                                    const std::vector<double>& staleness,
                                    const priority_options& options = {});

// P_i from scores (>= 0, not all zero unless alpha = 0 or uniform_mix = 1).
std::vector<double> sampling_probabilities(const std::vector<double>& scores, double alpha,
                                           double uniform_mix);

// Importance weights (N P_i)^(-beta), divided by their maximum when normalize is true.
std::vector<double> importance_weights(const std::vector<double>& probabilities, double beta,
                                       bool normalize = true);

class alias_sampler {
 public:
  // probabilities need not sum exactly to 1 (they are renormalised); all >= 0, sum > 0.
  explicit alias_sampler(const std::vector<double>& probabilities);
  std::size_t draw(rng& r) const;
  // k independent draws (with replacement).
  std::vector<std::size_t> draw_batch(std::size_t k, rng& r) const;
  std::size_t size() const { return accept_.size(); }

 private:
  std::vector<double> accept_;      // probability of keeping column i
  std::vector<std::size_t> alias_;  // the other outcome of column i
};

struct priority_batch {
  std::vector<std::size_t> indices;
  std::vector<double> weights;  // normalised importance weights of the drawn samples
};

// Everything above in one call: scores -> probabilities -> k draws with their weights.
class priority_sampler {
 public:
  priority_sampler(const std::vector<double>& loss, const std::vector<double>& staleness,
                   const priority_options& options = {});
  priority_batch draw(std::size_t k, rng& r) const;
  const std::vector<double>& probabilities() const { return probabilities_; }
  const std::vector<double>& weights() const { return weights_; }

 private:
  std::vector<double> probabilities_;
  std::vector<double> weights_;
  alias_sampler alias_;
};

}  // namespace troupe::policies
