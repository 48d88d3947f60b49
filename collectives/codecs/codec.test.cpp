#include "collectives/codecs/codec.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <random>

#include "collectives/compressed_allreduce.hpp"
#include "collectives/inproc/inproc_link.hpp"
#include "collectives/testing.hpp"

using namespace troupe::collectives;
using namespace std::chrono_literals;

namespace {

std::vector<float> random_values(std::size_t n, unsigned seed, float scale = 1.0f) {
  std::mt19937 rng{seed};
  std::normal_distribution<float> normal{0.0f, scale};
  std::vector<float> v(n);
  for (auto& x : v) x = normal(rng);
  return v;
}

std::vector<float> round_trip(const codec& c, const std::vector<float>& x, codec_state& state,
                              std::size_t* bytes = nullptr) {
  auto encoded = c.encode(x, state);
  if (bytes) *bytes = encoded.size();
  std::vector<float> y(x.size());
  c.decode(encoded, y);
  return y;
}

double norm(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += static_cast<double>(x) * x;
  return std::sqrt(s);
}

}  // namespace

TEST_CASE("fp16 and bf16 stay within their stated bounds and halve the bytes") {
  auto x = random_values(10007, 1, 100.0f);
  x.push_back(65504.0f);
  x.push_back(-3e-6f);  // subnormal in fp16
  x.push_back(0.0f);
  codec_state state;
  std::size_t bytes = 0;
  auto fp16 = make_codec("fp16");
  auto y = round_trip(*fp16, x, state, &bytes);
  CHECK(bytes == 2 * x.size() + 16);
  std::size_t outside = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    outside += std::fabs(x[i] - y[i]) > std::ldexp(std::fabs(x[i]), -11) + std::ldexp(1.0f, -25);
  CHECK(outside == 0);
  CHECK(y[x.size() - 3] == 65504.0f);
  CHECK(std::isinf(round_trip(*fp16, {70000.0f}, state)[0]));

  auto bf16 = make_codec("bf16");
  y = round_trip(*bf16, x, state);
  outside = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    outside += std::fabs(x[i] - y[i]) > std::ldexp(std::fabs(x[i]), -8);
  CHECK(outside == 0);
  // And the bounds are not vacuous: bf16 does lose bits.
  CHECK(round_trip(*bf16, {1.0f + 1.0f / 1024}, state)[0] == 1.0f);
}

TEST_CASE("top-k sends k entries and error feedback loses nothing") {
  auto codec = make_codec("topk:0.1");
  codec_state state;
  auto x = random_values(1000, 2);
  std::size_t bytes = 0;
  auto y = round_trip(*codec, x, state, &bytes);
  CHECK(bytes == 24 + 8 * 100);
  std::size_t nonzero = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    nonzero += y[i] != 0.0f;
    CHECK(y[i] + state.residual[i] == x[i]);  // exact: sent + kept = offered
  }
  CHECK(nonzero == 100);
  // Over many steps everything is eventually sent: the sum of what was sent plus the residual
  // equals the sum of the inputs.
  std::vector<double> sent(x.size(), 0), offered(x.size(), 0);
  for (std::size_t i = 0; i < x.size(); ++i) sent[i] = y[i], offered[i] = x[i];
  for (unsigned step = 0; step < 20; ++step) {
    auto g = random_values(1000, 10 + step);
    auto s = round_trip(*codec, g, state);
    for (std::size_t i = 0; i < x.size(); ++i) sent[i] += s[i], offered[i] += g[i];
  }
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    worst = std::max(worst, std::fabs(sent[i] + state.residual[i] - offered[i]));
  CHECK(worst < 1e-4);
}

TEST_CASE("PowerSGD: exact on low-rank payloads, never worse than sending nothing") {
  // A rank-2 matrix of 40 x 40 (n = 1600, so the codec's view is 40 x 40 too).
  std::vector<float> low_rank(1600);
  auto u = random_values(80, 3), v = random_values(80, 4);
  for (std::size_t i = 0; i < 40; ++i)
    for (std::size_t j = 0; j < 40; ++j) low_rank[i * 40 + j] = u[i] * v[j] + u[40 + i] * v[40 + j];
  auto codec = make_codec("powersgd:2");
  codec_state state;
  std::size_t bytes = 0;
  auto y = round_trip(*codec, low_rank, state, &bytes);
  CHECK(bytes == 20 + 4 * 2 * (40 + 40));
  std::vector<float> error(1600);
  for (std::size_t i = 0; i < 1600; ++i) error[i] = low_rank[i] - y[i];
  CHECK(norm(error) <= 1e-4 * norm(low_rank));

  codec_state general_state;
  auto x = random_values(997, 5);  // prime: padded matrix
  auto y2 = round_trip(*codec, x, general_state);
  std::vector<float> e2(x.size());
  double identity = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    e2[i] = x[i] - y2[i];
    identity = std::max(identity,
                        static_cast<double>(std::fabs(y2[i] + general_state.residual[i] - x[i])));
  }
  CHECK(norm(e2) <= norm(x));
  CHECK(norm(e2) > 0.5 * norm(x));  // rank 2 of a random 32 x 32 cannot be close
  CHECK(identity <= 1e-6 * norm(x));
}

TEST_CASE("SPD codec: half the bytes, exact triangle, bounded Cholesky, refuses non-SPD") {
  const std::size_t n = 64;
  auto b = random_values(n * n, 6);
  std::vector<float> a(n * n);  // A = B B^T / n + I: symmetric positive-definite
  double trace = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double s = i == j ? 1.0 : 0.0;
      for (std::size_t k = 0; k < n; ++k) s += static_cast<double>(b[i * n + k]) * b[j * n + k] / n;
      a[i * n + j] = static_cast<float>(s);
    }
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < i; ++j) a[j * n + i] = a[i * n + j];
  for (std::size_t i = 0; i < n; ++i) trace += a[i * n + i];
  codec_state state;
  std::size_t bytes = 0;
  auto tri = make_codec("spd-tri");
  CHECK(round_trip(*tri, a, state, &bytes) == a);
  CHECK(bytes == 24 + 4 * n * (n + 1) / 2);
  CHECK(bytes < a.size() * 4 * 0.52);
  auto chol = make_codec("spd-chol");
  auto y = round_trip(*chol, a, state);
  std::vector<float> error(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) error[i] = a[i] - y[i];
  CHECK(norm(error) <= std::ldexp(1.0, -22) * (trace + norm(a)));
  CHECK(norm(error) > 0);  // lossy indeed

  auto not_spd = a;
  not_spd[0] = -1.0f;
  CHECK_THROWS_WITH_AS(chol->encode(not_spd, state),
                       doctest::Contains("not symmetric positive-definite (Cholesky pivot 0"),
                       troupe::input_error);
  CHECK_THROWS_WITH_AS(tri->encode(not_spd, state),
                       doctest::Contains("not symmetric positive-definite"), troupe::input_error);
  auto asymmetric = a;
  asymmetric[1] += 0.5f;
  CHECK_THROWS_WITH_AS(tri->encode(asymmetric, state), doctest::Contains("not symmetric (A[1][0]"),
                       troupe::input_error);
  CHECK_THROWS_WITH_AS(tri->encode(std::vector<float>(10, 1.0f), state),
                       doctest::Contains("not a square matrix"), troupe::input_error);
  CHECK_THROWS_AS(make_codec("gzip"), troupe::input_error);
}

TEST_CASE("compressed allreduce: every rank gets the same sum of decoded payloads") {
  for (const std::string spec : {"fp16", "bf16", "topk:0.05", "powersgd:3"}) {
    const int size = 4;
    inproc_hub hub{size};
    auto c = make_codec(spec);
    std::vector<std::vector<float>> result(size);
    auto errors = testing::run_ranks(size, [&](int rank) {
      communicator comm = hub.connect(rank);
      codec_state state;
      auto data = random_values(1009, 100 + static_cast<unsigned>(rank));
      compressed_allreduce_options o;
      o.comm = &comm;
      o.data = data;
      o.encoding = c.get();
      o.state = &state;
      o.deadline = deadline_in(10s);
      compressed_allreduce(o);
      result[static_cast<std::size_t>(rank)] = data;
    });
    // The expected sum: every rank's payload through a fresh state, decoded, summed in order.
    std::vector<float> expected(1009, 0.0f);
    for (int rank = 0; rank < size; ++rank) {
      codec_state fresh;
      auto y = round_trip(*c, random_values(1009, 100 + static_cast<unsigned>(rank)), fresh);
      for (std::size_t i = 0; i < y.size(); ++i) expected[i] += y[i];
    }
    for (int rank = 0; rank < size; ++rank) {
      CAPTURE(spec);
      CHECK(errors[static_cast<std::size_t>(rank)] == "");
      CHECK(result[static_cast<std::size_t>(rank)] == expected);
    }
  }
}
