#pragma once
// Synthetic datasets whose generating statistics are known, so tests can check closed-form
// answers and policy benchmarks can control difficulty. All randomness comes from the given
// troupe::rng, so a seed reproduces the set exactly.
#include <cstddef>
#include <vector>

#include "core/rng.hpp"
#include "data/dataset.hpp"

namespace troupe::data {

struct linear_regression_set {
  dataset data;                // sample_shape {d}, targets filled
  std::vector<float> weights;  // the true w, d entries
  float bias = 0;              // the true b
};

// x ~ N(0, I_d); w ~ N(0, 1) per entry; b ~ N(0, 1); y = w.x + b + N(0, noise_std^2).
linear_regression_set make_linear_regression(std::size_t n, std::size_t d, double noise_std,
                                             rng& r);

struct blobs_set {
  dataset data;                // sample_shape {d}, labels filled
  std::vector<float> centers;  // classes * d, row c is the mean of class c
};

// Centres uniform in [-10, 10]^d; sample i has label i % classes (so classes are balanced) and
// x = centre + N(0, spread^2 I).
blobs_set make_gaussian_blobs(std::size_t n, std::size_t classes, std::size_t d, double spread,
                              rng& r);

struct hard_easy_options {
  std::size_t n = 1000;
  std::size_t classes = 2;
  std::size_t d = 2;
  double hard_fraction = 0.1;
  double separation = 4.0;  // distance between neighbouring class centres
  double spread = 1.0;      // std of easy samples around their centre
  // Hard samples lie within this distance of the boundary to another class (on their own side);
  // easy samples lie further than this from every boundary.
  double hard_margin = 0.25;
};

struct hard_easy_set {
  dataset data;
  std::vector<float> centers;     // classes * d
  std::vector<std::size_t> hard;  // sorted indices of the hard samples
  std::vector<bool> is_hard;      // n flags, true at the indices in `hard`
};

// Label-noise-free blobs where a known subset sits close to a decision boundary. Centres lie on a
// circle in the first two coordinates (on a line when d == 1), neighbours `separation` apart.
// Labels are i % classes. Every sample is nearer its own centre than any other; its margin is its
// smallest distance to a bisecting hyperplane between its centre and another. Exactly
// round(n * hard_fraction) samples, at indices drawn from the rng, have margin in
// (0, hard_margin]; every other sample has margin > hard_margin.
hard_easy_set make_hard_easy_blobs(const hard_easy_options& options, rng& r);

// The margin defined above, for checking and for priority heuristics.
double blob_margin(const float* x, std::size_t label, const std::vector<float>& centers,
                   std::size_t d);

}  // namespace troupe::data
