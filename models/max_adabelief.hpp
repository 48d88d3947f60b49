#pragma once
// Max-AdaBelief in pieces, for the distributed form: every worker keeps its own
// moments from its own gradient, the workers allreduce the bias-corrected first moment (mean) and
// the bias-corrected max second moment (max), and every replica applies the same update. The
// replicated "max-adabelief" optimizer is exactly local_moments() then apply_update() on one
// worker. With t the 1-based step and g' = g + wd * p (L2, as for adam):
//
//   m     = b1 m + (1 - b1) g'
//   s     = b2 s + (1 - b2) (g' - m)^2 + eps        (eps inside s_t, AdaBelief Algorithm 2)
//   s_max = max(s_max, s)                           (AMSGrad: the max of the RAW moment, taken
//                                                    before bias correction)
//   m_hat = m / (1 - b1^t);  s_hat = s_max / (1 - b2^t)
//   p    -= lr * m_hat / (sqrt(s_hat) + eps)
//
// This is where torch.optim.Adam(amsgrad=True) takes its max (max_exp_avg_sq, corrected after).
// Because every worker is at the same t, max over workers of s_hat_i equals the correction of the
// max of the raw s_max_i, so reducing the corrected values is exact.
#include <cstddef>
#include <cstdint>

#include "models/optimizer.hpp"

namespace troupe::models::max_adabelief {

// Advances one worker's moments m, s, s_max (n floats each, zero before step 1) to step t >= 1
// with its gradient, and writes the values to reduce: m_hat (to average across workers) and
// s_hat (to max-reduce). params is read only for weight decay (may be null when it is 0).
void local_moments(const optimizer_spec& h, std::int64_t t, std::size_t n, const float* params,
                   const float* grad, float* m, float* s, float* s_max, float* m_hat, float* s_hat);

// p -= lr * m_hat / (sqrt(s_hat) + eps), with the already-reduced moments.
void apply_update(const optimizer_spec& h, std::size_t n, float* params, const float* m_hat,
                  const float* s_hat);

}  // namespace troupe::models::max_adabelief
