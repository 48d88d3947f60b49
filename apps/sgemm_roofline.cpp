#include "apps/sgemm_roofline.hpp"

#include <cblas.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "core/clock.hpp"
#include "core/median.hpp"
#include "core/rng.hpp"

namespace troupe::apps {

namespace {

std::vector<float> random_matrix(std::size_t count, rng& r) {
  std::vector<float> v(count);
  for (auto& x : v) x = r.uniform_float(-1.0f, 1.0f);  // no denormals, no zeros BLAS could skip
  return v;
}

}  // namespace

double sgemm_call_seconds(const models::layers::gemm_shape& g) {
  if (g.m == 0 || g.n == 0 || g.k == 0) return 0.0;
  rng r(7);
  const auto a = random_matrix(g.m * g.k, r), b = random_matrix(g.k * g.n, r);
  std::vector<float> c(g.m * g.n);
  // Row-major, tightly packed: op(A) is m x k, stored k x m when transposed; likewise B.
  const int M = static_cast<int>(g.m), N = static_cast<int>(g.n), K = static_cast<int>(g.k);
  const int lda = g.trans_a ? M : K, ldb = g.trans_b ? K : N;
  auto call = [&] {
    cblas_sgemm(CblasRowMajor, g.trans_a ? CblasTrans : CblasNoTrans,
                g.trans_b ? CblasTrans : CblasNoTrans, M, N, K, 1.0f, a.data(), lda, b.data(), ldb,
                0.0f, c.data(), N);
  };
  stopwatch first;
  call();  // also warms the caches and OpenBLAS's buffers
  // Rounds of about 0.2 ms, so the clock's resolution is lost in them even for tiny shapes.
  const double once = std::max(first.seconds(), 1e-8);
  const int reps = static_cast<int>(std::clamp(2e-4 / once, 1.0, 10000.0));
  constexpr int rounds = 15;
  std::vector<double> per_call;
  for (int i = 0; i < rounds; ++i) {
    stopwatch sw;
    for (int j = 0; j < reps; ++j) call();
    per_call.push_back(sw.seconds() / reps);
  }
  // The median rather than the best: this machine may be shared, and the step time it is
  // compared with is a mean over the run.
  return median(per_call);
}

double sgemm_gflops(const std::vector<models::layers::gemm_shape>& gemms) {
  std::map<std::tuple<bool, bool, std::size_t, std::size_t, std::size_t>, double> timed;
  double flops = 0.0, seconds = 0.0;
  for (const auto& g : gemms) {
    const auto key = std::make_tuple(g.trans_a, g.trans_b, g.m, g.n, g.k);
    auto it = timed.find(key);
    if (it == timed.end()) it = timed.emplace(key, sgemm_call_seconds(g)).first;
    flops += g.flops();
    seconds += static_cast<double>(g.calls) * it->second;
  }
  return seconds > 0.0 ? flops / seconds / 1e9 : 0.0;
}

}  // namespace troupe::apps
