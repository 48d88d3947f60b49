#pragma once
// Losses. Both return SUMS (of per-sample losses, weighted when weights is non-null) and write the
// gradient of that sum, so a batch split across workers adds up to the whole-batch result.
#include <cstddef>
#include <cstdint>

#include "models/batch.hpp"

namespace troupe::models::layers {

// Softmax cross-entropy over logits[n,k], computed through log-sum-exp so large logits cannot
// overflow. dlogits (nullable: forward only) gets w_i * (softmax_i - onehot(label_i)). correct
// counts argmax == label, unweighted. sample_loss (nullable) gets each sample's UNWEIGHTED loss
// (data priority scores samples by it). Throws troupe::input_error on a label outside [0, k).
step_stats softmax_cross_entropy(const float* logits, const std::int32_t* labels,
                                 const float* weights, std::size_t n, std::size_t k, float* dlogits,
                                 float* sample_loss = nullptr);

// Squared error 0.5 * w_i * (y_i - t_i)^2 over y[n] (one output per sample); dy (nullable) gets
// w_i * (y_i - t_i); sample_loss (nullable) gets each unweighted 0.5 (y_i - t_i)^2.
step_stats squared_error(const float* y, const float* targets, const float* weights, std::size_t n,
                         float* dy, float* sample_loss = nullptr);

}  // namespace troupe::models::layers
