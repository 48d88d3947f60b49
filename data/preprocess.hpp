#pragma once
// Preprocessing as a pipeline of steps. Two kinds of step:
//  - transforms (normalize, standardize, resize) are fitted once on the training set and then
//    applied to whole datasets, train and test alike, with the training statistics;
//  - augmentations (flip, crop) are random and per sample, run at batch time with a troupe::rng,
//    and leave whole-dataset application untouched (test data is never augmented).
// A pipeline applies its transforms in order; augmentations run afterwards, in their order, on
// the transformed samples.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "data/dataset.hpp"

namespace troupe::data {

using shape_t = std::vector<std::size_t>;

class step {
 public:
  virtual ~step() = default;
  // The spec it was made from, e.g. "resize:14x14".
  virtual std::string name() const = 0;
  virtual bool is_augmentation() const { return false; }
  // Learns statistics from `train` (as it looks after the earlier steps); also the place to
  // reject a dataset the step cannot handle, with a troupe::input_error.
  virtual void fit(const dataset& train) { (void)train; }
  // Transforms every sample; may change sample_shape. Augmentations do nothing here.
  virtual void apply(dataset& d) const = 0;
  // Randomly transforms one sample of shape `shape` in place, keeping its shape.
  virtual void augment(float* sample, const shape_t& shape, rng& r) const {
    (void)sample, (void)shape, (void)r;
  }
};

// Builds a step from its spec:
//   normalize | normalise        min-max over all train values to [0, 1]
//   normalize:K                  divide by the constant K (e.g. normalize:255)
//   standardize | standardise    per-feature (v - mean) / std with train statistics
//   standardize:global           one mean and std over all train values
//   flip | flip:P                horizontal flip with probability P (default 0.5), images only
//   crop | crop:P                zero-pad by P pixels (default 4) and crop a random window of the
//                                original size, images only
//   resize:HxW                   bilinear resize of each channel to H x W, images only
// An unknown name or a bad parameter is a troupe::input_error naming the spec.
std::unique_ptr<step> make_step(const std::string& spec);

class pipeline {
 public:
  pipeline() = default;
  explicit pipeline(const std::vector<std::string>& specs);

  pipeline& add(std::unique_ptr<step> s);
  std::size_t size() const { return steps_.size(); }
  std::vector<std::string> names() const;

  // Fits every step on the training set, transforming it in place as it goes (later steps fit
  // on what earlier steps produce).
  void fit_apply(dataset& train);
  // Same statistics without changing `train` (works on a copy).
  void fit(const dataset& train);
  // The fitted transforms, for the test set or any other data.
  void apply(dataset& d) const;
  // The augmentations on one sample, or on every sample of a dataset.
  void augment(float* sample, const shape_t& shape, rng& r) const;
  void augment(dataset& d, rng& r) const;
  bool has_augmentation() const;

 private:
  std::vector<std::unique_ptr<step>> steps_;
  bool fitted_ = false;
};

}  // namespace troupe::data
