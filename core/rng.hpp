#pragma once
// Deterministic random numbers: the same seed gives the same stream on every platform and
// standard library (std::*_distribution is implementation-defined, so we do not use it).
// xoshiro256** seeded through splitmix64. Not thread-safe: one instance per owner.
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace troupe {

class rng {
 public:
  using state_type = std::array<std::uint64_t, 4>;

  explicit rng(std::uint64_t seed = 0x5eed) { reseed(seed); }

  void reseed(std::uint64_t seed);
  // Derives an independent stream, e.g. one per worker: rng(seed).fork(rank).
  rng fork(std::uint64_t stream) const;

  std::uint64_t next_u64();
  // Uniform in [0, 1) with 53 random bits.
  double uniform();
  float uniform_float(float lo, float hi) { return lo + (hi - lo) * static_cast<float>(uniform()); }
  // Uniform integer in [0, n), unbiased (Lemire's method). n must be > 0.
  std::uint64_t below(std::uint64_t n);
  // Standard normal (Box-Muller, the spare value cached).
  double normal();
  double normal(double mean, double stddev) { return mean + stddev * normal(); }

  template <class T>
  void shuffle(std::vector<T>& v) {
    for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(i)]);
  }

  // Full state, so checkpoints can resume the exact stream.
  state_type state() const { return s_; }
  void set_state(const state_type& s) {
    s_ = s;
    has_spare_ = false;
  }

 private:
  state_type s_{};
  bool has_spare_ = false;
  double spare_ = 0.0;
};

}  // namespace troupe
