// Symmetric positive-definite payloads (covariances, preconditioners, Gram matrices): an n x n
// SPD matrix is determined by its lower triangle, or by its Cholesky factor L (A = L L^T), so
// n(n+1)/2 values travel instead of n^2. A payload that is not square, not symmetric or not
// positive-definite is refused with an input_error that says which, and where.
#include <algorithm>
#include <cmath>
#include <string>

#include "collectives/codecs/codec.hpp"
#include "collectives/codecs/wire_format.hpp"

namespace troupe::collectives {
namespace {

std::size_t side_of(std::size_t count) {
  const auto n = static_cast<std::size_t>(std::llround(std::sqrt(static_cast<double>(count))));
  if (n * n != count)
    throw input_error("spd codec: payload of " + std::to_string(count) +
                      " values is not a square matrix");
  return n;
}

// Cholesky in double; throws naming the first pivot that is not positive.
std::vector<double> cholesky(span<const float> a, std::size_t n) {
  std::vector<double> l(n * n, 0.0);
  for (std::size_t j = 0; j < n; ++j) {
    double diagonal = a[j * n + j];
    for (std::size_t k = 0; k < j; ++k) diagonal -= l[j * n + k] * l[j * n + k];
    if (!(diagonal > 0.0))
      throw input_error("spd codec: payload is not symmetric positive-definite (Cholesky pivot " +
                        std::to_string(j) + " is " + std::to_string(diagonal) + ")");
    l[j * n + j] = std::sqrt(diagonal);
    for (std::size_t i = j + 1; i < n; ++i) {
      double sum = a[i * n + j];
      for (std::size_t k = 0; k < j; ++k) sum -= l[i * n + k] * l[j * n + k];
      l[i * n + j] = sum / l[j * n + j];
    }
  }
  return l;
}

class spd_codec final : public codec {
 public:
  explicit spd_codec(bool use_cholesky) : cholesky_(use_cholesky) {}
  std::string name() const override { return cholesky_ ? "spd-chol" : "spd-tri"; }

  std::vector<std::byte> encode(span<const float> values, codec_state&) const override {
    const std::size_t n = side_of(values.size());
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < i; ++j) {
        const float a = values[i * n + j], b = values[j * n + i];
        if (std::fabs(a - b) > 1e-6f * std::max({1.0f, std::fabs(a), std::fabs(b)}))
          throw input_error("spd codec: payload is not symmetric (A[" + std::to_string(i) + "][" +
                            std::to_string(j) + "] = " + std::to_string(a) + " but A[" +
                            std::to_string(j) + "][" + std::to_string(i) +
                            "] = " + std::to_string(b) + ")");
      }
    const std::vector<double> l = cholesky(values, n);  // also the SPD check of spd-tri
    codec_wire::writer w;
    w.put<std::uint64_t>(values.size());
    w.put<std::uint64_t>(n);
    w.put<std::uint64_t>(cholesky_ ? 1 : 0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j <= i; ++j)
        w.put(cholesky_ ? static_cast<float>(l[i * n + j]) : values[i * n + j]);
    return std::move(w.bytes);
  }

  void decode(span<const std::byte> bytes, span<float> out) const override {
    codec_wire::reader r{bytes, "spd"};
    codec_wire::expect_count(r.get<std::uint64_t>(), out.size(), "spd");
    const auto n = static_cast<std::size_t>(r.get<std::uint64_t>());
    const bool factor = r.get<std::uint64_t>() == 1;
    if (n * n != out.size()) throw input_error("spd codec: inconsistent side in payload");
    std::vector<float> lower(n * (n + 1) / 2);
    r.get_array(lower.data(), lower.size());
    r.expect_end();
    auto tri = [&](std::size_t i, std::size_t j) { return lower[i * (i + 1) / 2 + j]; };  // j <= i
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        double v = 0;
        if (factor) {
          for (std::size_t k = 0; k <= j; ++k) v += static_cast<double>(tri(i, k)) * tri(j, k);
        } else {
          v = tri(i, j);
        }
        out[i * n + j] = out[j * n + i] = static_cast<float>(v);
      }
  }

 private:
  bool cholesky_;
};

}  // namespace

std::unique_ptr<codec> make_spd_codec(bool cholesky) {
  return std::make_unique<spd_codec>(cholesky);
}

}  // namespace troupe::collectives
