#include "collectives/perf.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "collectives/allreduce.hpp"
#include "collectives/compressed_allreduce.hpp"
#include "core/clock.hpp"
#include "core/median.hpp"

namespace troupe::collectives::perf {
namespace {

// The pattern of rank r at index i depends on i mod 31 only, so the exact sums fit in a table.
constexpr std::size_t period = 31;
float pattern(int rank, std::size_t i) {
  return static_cast<float>(
      static_cast<int>((i * 7 + static_cast<std::size_t>(rank) * 13) % period) - 15);
}

// The exact sum every rank must end with: plain ring sum, or the sum of each rank's payload
// through the codec (encoded with a fresh state, as run_rank does each iteration).
std::vector<float> expected_result(int size, std::size_t count, const codec* encoding) {
  std::vector<float> expected(count, 0.0f);
  if (!encoding) {
    float table[period] = {};
    for (std::size_t k = 0; k < period; ++k)
      for (int r = 0; r < size; ++r) table[k] += pattern(r, k);
    for (std::size_t i = 0; i < count; ++i) expected[i] = table[i % period];
    return expected;
  }
  std::vector<float> source(count), decoded(count);
  for (int r = 0; r < size; ++r) {
    for (std::size_t i = 0; i < count; ++i) source[i] = pattern(r, i);
    codec_state fresh;
    encoding->decode(encoding->encode(source, fresh), decoded);
    for (std::size_t i = 0; i < count; ++i) expected[i] += decoded[i];
  }
  return expected;
}

// The sweep shared by both run_rank forms.
std::vector<rank_result> run_sweep(int rank, int size, const params& p, const codec* encoding,
                                   const allreduce_fn& op, const std::function<void()>& barrier) {
  std::vector<rank_result> results;
  for (long long bytes : p.sizes()) {
    const std::size_t count = static_cast<std::size_t>(bytes) / sizeof(float);
    std::vector<float> source(count), data(count);
    for (std::size_t i = 0; i < count; ++i) source[i] = pattern(rank, i);
    span<const float> sum;
    std::vector<double> copy_times;  // rank 0: memcpy of the same buffers, beside each op
    auto one_op = [&] {
      std::memcpy(data.data(), source.data(), count * sizeof(float));
      barrier();
      // The memcpy reference is timed between the same barriers as the op, while the other ranks
      // wait: both see the same machine load (a shared machine drifts during a sweep).
      if (rank == 0) {
        stopwatch copy_clock;
        std::memcpy(data.data(), source.data(), count * sizeof(float));
        copy_times.push_back(copy_clock.seconds());
      }
      barrier();
      stopwatch clock;
      sum = op(span<float>{data.data(), count});
      return clock.seconds();
    };
    for (int w = 0; w < p.warmup; ++w) one_op();
    copy_times.clear();
    std::vector<double> times;
    for (int it = 0; it < p.iters; ++it) times.push_back(one_op());
    rank_result r;
    r.bytes = bytes;
    r.median_us = median(times) * 1e6;
    const auto expected = expected_result(size, count, encoding);
    for (std::size_t i = 0; i < count; ++i) r.wrong += sum[i] != expected[i];
    // Every rank has read the result before anyone starts the next op (which may reuse it).
    barrier();
    if (rank == 0) {
      const double t = median(copy_times);
      r.memcpy_GBps = t > 0 ? static_cast<double>(bytes) / t / 1e9 : 0;
    }
    results.push_back(r);
  }
  return results;
}

}  // namespace

std::vector<long long> params::sizes() const {
  std::vector<long long> out;
  for (double b = static_cast<double>(min_bytes); b <= static_cast<double>(max_bytes) * 1.0000001;
       b *= step_factor) {
    out.push_back(static_cast<long long>(b) / 4 * 4);
    if (step_factor <= 1.0) break;
  }
  return out;
}

std::vector<rank_result> run_rank(communicator& comm, const params& p) {
  const auto encoding = p.codec.empty() ? nullptr : make_codec(p.codec);
  std::vector<float> barrier_value(1);
  auto options_for = [&](span<float> data) {
    allreduce_options o;
    o.comm = &comm;
    o.data = data;
    o.chunk_bytes = p.chunk_bytes;
    o.one_step_bytes = p.one_step_bytes;
    o.two_step_bytes = p.two_step_bytes;
    o.deadline = steady::now() + std::chrono::milliseconds(p.op_timeout_ms);
    return o;
  };
  auto op = [&](span<float> data) -> span<const float> {
    if (encoding) {
      codec_state state;  // fresh each time: the check knows the exact expected sum
      compressed_allreduce_options o;
      static_cast<op_options&>(o) = options_for(data);
      o.data = data;
      o.encoding = encoding.get();
      o.state = &state;
      compressed_allreduce(o);
    } else {
      allreduce(options_for(data));
    }
    return span<const float>{data.data(), data.size()};
  };
  return run_sweep(comm.rank(), comm.size(), p, encoding.get(), op,
                   [&] { allreduce(options_for(barrier_value)); });
}

std::vector<rank_result> run_rank(int rank, int size, const params& p, const allreduce_fn& op,
                                  const std::function<void()>& barrier) {
  if (!p.codec.empty()) throw input_error("perf: codecs need the communicator form of run_rank");
  return run_sweep(rank, size, p, nullptr, op, barrier);
}

std::vector<row> combine(const std::vector<std::vector<rank_result>>& per_rank) {
  std::vector<row> rows;
  if (per_rank.empty()) return rows;
  const double n = static_cast<double>(per_rank.size());
  for (std::size_t s = 0; s < per_rank[0].size(); ++s) {
    row r;
    r.bytes = per_rank[0][s].bytes;
    for (const auto& rank : per_rank) {
      r.time_us = std::max(r.time_us, rank.at(s).median_us);
      r.wrong += rank.at(s).wrong;
      r.memcpy_GBps = std::max(r.memcpy_GBps, rank.at(s).memcpy_GBps);
    }
    r.algbw_GBps = r.time_us > 0 ? static_cast<double>(r.bytes) / (r.time_us * 1e-6) / 1e9 : 0;
    r.busbw_GBps = r.algbw_GBps * 2.0 * (n - 1.0) / n;
    rows.push_back(r);
  }
  return rows;
}

std::string table_header() {
  char line[160];
  std::snprintf(line, sizeof line, "#%14s %12s %8s %12s %12s %12s %8s %13s\n", "size", "count",
                "type", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong", "memcpy(GB/s)");
  return line;
}

std::string table_line(const row& r) {
  char line[200];
  std::snprintf(line, sizeof line, " %14lld %12lld %8s %12.1f %12.3f %12.3f %8lld %13.2f\n",
                r.bytes, r.bytes / 4, "float", r.time_us, r.algbw_GBps, r.busbw_GBps, r.wrong,
                r.memcpy_GBps);
  return line;
}

std::string to_json(const std::vector<row>& rows, int ranks, const std::string& transport,
                    const std::string& codec) {
  auto out = nlohmann::json::array();
  for (const auto& r : rows)
    out.push_back({{"bytes", r.bytes},
                   {"ranks", ranks},
                   {"transport", transport},
                   {"time_us", r.time_us},
                   {"algbw_GBps", r.algbw_GBps},
                   {"busbw_GBps", r.busbw_GBps},
                   {"wrong", r.wrong},
                   {"memcpy_GBps", r.memcpy_GBps},
                   {"codec", codec.empty() ? "none" : codec}});
  return out.dump(2) + "\n";
}

std::string encode_results(const std::vector<rank_result>& results) {
  std::ostringstream out;
  out.precision(17);
  for (const auto& r : results)
    out << r.bytes << ' ' << r.median_us << ' ' << r.wrong << ' ' << r.memcpy_GBps << '\n';
  return out.str();
}

std::vector<rank_result> decode_results(const std::string& text) {
  std::istringstream in{text};
  std::vector<rank_result> out;
  rank_result r;
  while (in >> r.bytes >> r.median_us >> r.wrong >> r.memcpy_GBps) out.push_back(r);
  return out;
}

}  // namespace troupe::collectives::perf
