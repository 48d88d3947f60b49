#pragma once
// Virtual shares of a shared device across jobs (time slicing): fixed and adaptive.
//
// Time slicing in the style of Gandiva (Xiao et al., OSDI 2018) and AntMan (Xiao et al., OSDI
// 2020): each job on a shared device gets a fraction s_j of its time, sum_j s_j = 1.
//
// Fixed: s_j = w_j / sum_k w_k for the configured weights w_j (job.share x priority weight).
//
// Adaptive, after Pollux (Qiao et al., OSDI 2021): what a job gets out of its time is GOODPUT =
// throughput x statistical efficiency, where, with the gradient noise scale B_noise
// (noise_scale.hpp) and the batch B0 the learning rate was tuned for (McCandlish et al. 2018;
// Pollux eq. 3),
//   E(B) = (B_noise + B0) / (B_noise + B)        (E(B0) = 1; a larger batch is worth less per
//                                                  sample once B exceeds B_noise).
// A job's value per unit of share is v_j = (throughput_j / s_j) x E_j: its measured samples/s
// divided by the share it had, so that holding a large share does not count as being good at
// using it. The target maximises sum_j w_j^(1-p) (s_j v_j)^p over the simplex (p in [0, 1):
// p -> 0 is weighted proportional fairness, p -> 1 all to the best job; Pollux uses a power mean
// of speedups in the same spirit). By Lagrange,
//   target_j  proportional to  w_j v_j^gamma,   gamma = p / (1 - p)   (gamma = 1 for p = 1/2),
// so gamma = 0 gives back the fixed shares. The target is then raised to a floor per job
// (water-filling: a job is never starved and keeps producing the measurements that value it),
// and the shares move a fraction `damping` toward it; a move smaller than `min_change` on every
// job is not made (churn costs context switches and cold caches).
// Jobs without a throughput measurement get the mean value of those with one (neutral); jobs
// without a noise scale get E = 1.
#include <optional>
#include <string>
#include <vector>

namespace troupe::policies {

// w / sum(w). Throws troupe::input_error when empty, any weight is negative / non-finite, or all
// are zero.
std::vector<double> fixed_shares(const std::vector<double>& weights);

// Pollux / McCandlish statistical efficiency of batch B relative to B0 (formula above).
double statistical_efficiency(double b_noise, double batch, double b0);

// Raises every entry of a distribution to at least `floor` and rescales the others so that the
// sum stays 1 (entries pushed to the floor stay there). Throws when n * floor > 1.
std::vector<double> apply_floor(const std::vector<double>& shares, double floor);

struct job_share_state {
  double weight = 1.0;            // priority weight (> 0)
  double share = 0.0;             // current share (renormalised with the others)
  double throughput = 0.0;        // samples/s measured at that share; <= 0: unknown
  double batch = 1.0;             // current global batch B
  double b0 = 1.0;                // batch the learning rate was tuned for
  std::optional<double> b_noise;  // gradient noise scale, when known
};

struct share_options {
  double floor = 0.05;       // minimum share per job
  double damping = 0.5;      // fraction of the way to the target, (0, 1]
  double gamma = 1.0;        // value exponent (0 = fixed shares by weight)
  double min_change = 0.01;  // below this on every job: hold
};

struct share_decision {
  std::vector<double> shares;  // normalised; == the current (normalised) shares when !changed
  std::vector<double> target;  // where the damping is heading
  bool changed = false;
  std::string reason;
};

share_decision adaptive_shares(const std::vector<job_share_state>& jobs,
                               const share_options& options = {});

}  // namespace troupe::policies
