// PowerSGD (Vogels, Karimireddy and Jaggi, 2019), rank r, with error feedback.
//
// The payload of n values plus the residual is viewed as a matrix M of rows x cols (cols =
// ceil(sqrt n), zero-padded). One power-iteration step with the warm-started right factor Q
// (cols x r, kept in codec_state) gives
//     P = M Q,  P <- orthonormalise(P),  Q = M^T P,
// and the low-rank approximation is P Q^T = P P^T M: the projection of M on span(P), so
// ||M - P Q^T||_F <= ||M||_F, with equality only if M is orthogonal to P. The residual
// M - P Q^T is kept for the next step. P and Q travel; (rows + cols) r values instead of n.
#include <algorithm>
#include <cmath>
#include <string>

#include "collectives/codecs/codec.hpp"
#include "collectives/codecs/wire_format.hpp"

namespace troupe::collectives {
namespace {

struct shape {
  std::size_t rows = 0, cols = 0, rank = 0;
};

shape shape_for(std::size_t n, int wanted_rank) {
  shape s;
  if (n == 0) return s;
  s.cols = static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(n))));
  s.rows = (n + s.cols - 1) / s.cols;
  s.rank = std::min({static_cast<std::size_t>(wanted_rank), s.rows, s.cols});
  return s;
}

// approximation[i] for i < n: (P Q^T) in row-major order; shared by encode and decode so that
// both compute bit-identical values.
void low_rank_product(const shape& s, const float* p, const float* q, float* out, std::size_t n) {
  for (std::size_t i = 0; i < s.rows; ++i)
    for (std::size_t j = 0; j < s.cols; ++j) {
      const std::size_t at = i * s.cols + j;
      if (at >= n) return;
      double sum = 0;
      for (std::size_t k = 0; k < s.rank; ++k)
        sum += static_cast<double>(p[i * s.rank + k]) * q[j * s.rank + k];
      out[at] = static_cast<float>(sum);
    }
}

class powersgd_codec final : public codec {
 public:
  explicit powersgd_codec(int rank) : rank_(rank) {}
  std::string name() const override { return "powersgd:" + std::to_string(rank_); }

  std::vector<std::byte> encode(span<const float> values, codec_state& state) const override {
    const std::size_t n = values.size();
    const shape s = shape_for(n, rank_);
    std::vector<float>& m = state.accumulate(values);  // M, row-major, implicit padding
    auto at = [&](std::size_t i, std::size_t j) -> double {
      const std::size_t k = i * s.cols + j;
      return k < n ? m[k] : 0.0;
    };
    if (state.q.size() != s.cols * s.rank) {
      // A fixed pseudo-random start, the same on every rank (as the paper's shared seed).
      state.q.resize(s.cols * s.rank);
      std::uint64_t x = 0x9e3779b97f4a7c15ull;
      for (auto& v : state.q) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        v = static_cast<float>(static_cast<double>(x % 2001) / 1000.0 - 1.0);
      }
    }
    std::vector<double> p(s.rows * s.rank, 0.0);
    for (std::size_t i = 0; i < s.rows; ++i)
      for (std::size_t j = 0; j < s.cols; ++j) {
        const double mij = at(i, j);
        if (mij == 0.0) continue;
        for (std::size_t k = 0; k < s.rank; ++k) p[i * s.rank + k] += mij * state.q[j * s.rank + k];
      }
    // Modified Gram-Schmidt on the columns of P; a column that vanishes stays zero.
    for (std::size_t k = 0; k < s.rank; ++k) {
      for (std::size_t prev = 0; prev < k; ++prev) {
        double dot = 0;
        for (std::size_t i = 0; i < s.rows; ++i) dot += p[i * s.rank + k] * p[i * s.rank + prev];
        for (std::size_t i = 0; i < s.rows; ++i) p[i * s.rank + k] -= dot * p[i * s.rank + prev];
      }
      double norm = 0;
      for (std::size_t i = 0; i < s.rows; ++i) norm += p[i * s.rank + k] * p[i * s.rank + k];
      norm = std::sqrt(norm);
      for (std::size_t i = 0; i < s.rows; ++i)
        p[i * s.rank + k] = norm > 1e-30 ? p[i * s.rank + k] / norm : 0.0;
    }
    std::vector<double> q(s.cols * s.rank, 0.0);
    for (std::size_t i = 0; i < s.rows; ++i)
      for (std::size_t j = 0; j < s.cols; ++j) {
        const double mij = at(i, j);
        if (mij == 0.0) continue;
        for (std::size_t k = 0; k < s.rank; ++k) q[j * s.rank + k] += mij * p[i * s.rank + k];
      }
    std::vector<float> p32(p.begin(), p.end()), q32(q.begin(), q.end());
    state.q = q32;  // warm start for the next step
    std::vector<float> approximation(n);
    low_rank_product(s, p32.data(), q32.data(), approximation.data(), n);
    for (std::size_t i = 0; i < n; ++i) m[i] -= approximation[i];  // the new residual

    codec_wire::writer w;
    w.put<std::uint64_t>(n);
    w.put<std::uint32_t>(static_cast<std::uint32_t>(s.rows));
    w.put<std::uint32_t>(static_cast<std::uint32_t>(s.cols));
    w.put<std::uint32_t>(static_cast<std::uint32_t>(s.rank));
    w.put_array(p32.data(), p32.size());
    w.put_array(q32.data(), q32.size());
    return std::move(w.bytes);
  }

  void decode(span<const std::byte> bytes, span<float> out) const override {
    codec_wire::reader r{bytes, "powersgd"};
    codec_wire::expect_count(r.get<std::uint64_t>(), out.size(), "powersgd");
    shape s;
    s.rows = r.get<std::uint32_t>();
    s.cols = r.get<std::uint32_t>();
    s.rank = r.get<std::uint32_t>();
    if (s.rows * s.cols < out.size() || s.rank > std::min(s.rows, s.cols))
      throw input_error("powersgd codec: inconsistent shape in payload");
    std::vector<float> p(s.rows * s.rank), q(s.cols * s.rank);
    r.get_array(p.data(), p.size());
    r.get_array(q.data(), q.size());
    r.expect_end();
    low_rank_product(s, p.data(), q.data(), out.data(), out.size());
  }

 private:
  int rank_;
};

}  // namespace

std::unique_ptr<codec> make_powersgd_codec(int rank) {
  if (rank < 1) throw input_error("powersgd codec: rank must be at least 1");
  return std::make_unique<powersgd_codec>(rank);
}

}  // namespace troupe::collectives
