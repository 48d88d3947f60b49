#pragma once
// The allreduce performance harness, the nccl-tests way (STYLE habit 8): sweep sizes, warm up,
// time each iteration between barriers, take each rank's median, report the maximum of the
// ranks' medians, and check the data (#wrong = elements that differ from the exact sum).
//
//   algbw = bytes / time;  busbw = algbw * 2 (n - 1) / n   (what each link carries, so the
//   figure compares across rank counts and with all_reduce_perf and MPI).
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "collectives/allreduce.hpp"
#include "collectives/codecs/codec.hpp"
#include "collectives/communicator.hpp"

namespace troupe::collectives::perf {

struct params {
  long long min_bytes = 4096;
  long long max_bytes = 256ll << 20;
  double step_factor = 2.0;
  int iters = 20;
  int warmup = 5;
  std::size_t chunk_bytes = std::size_t{1} << 20;
  std::string codec;  // empty: plain allreduce
  // allreduce's choice of form by size (allreduce_options): 0 and 0 force the ring.
  std::size_t one_step_bytes = allreduce_options{}.one_step_bytes;
  std::size_t two_step_bytes = allreduce_options{}.two_step_bytes;
  long long op_timeout_ms = 60000;

  std::vector<long long> sizes() const;  // bytes, multiples of 4
};

// One rank's figures for one size.
struct rank_result {
  long long bytes = 0;
  double median_us = 0;
  long long wrong = 0;
  double memcpy_GBps = 0;  // measured by rank 0 only
};

// Runs the sweep on this rank; every member calls it with the same params.
std::vector<rank_result> run_rank(communicator& comm, const params& p);

// The same sweep over any allreduce: `op` sums `data` over the ranks and returns where the sum
// is (data itself for a ring; the group's shared buffer for the in-process shared allreduce);
// `barrier` lines the ranks up before each timed iteration. Codecs need the communicator form.
using allreduce_fn = std::function<span<const float>(span<float> data)>;
std::vector<rank_result> run_rank(int rank, int size, const params& p, const allreduce_fn& op,
                                  const std::function<void()>& barrier);

// One line of the table: the ranks' results for one size combined.
struct row {
  long long bytes = 0;
  double time_us = 0;  // max over ranks of the median
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  long long wrong = 0;  // summed over ranks
  double memcpy_GBps = 0;
};

std::vector<row> combine(const std::vector<std::vector<rank_result>>& per_rank);

std::string table_header();
std::string table_line(const row& r);
// The JSON array of --json: bytes, ranks, transport, time_us, algbw_GBps, busbw_GBps, wrong,
// memcpy_GBps, codec.
std::string to_json(const std::vector<row>& rows, int ranks, const std::string& transport,
                    const std::string& codec);

// rank_result lists travel through the rendezvous store between processes as text.
std::string encode_results(const std::vector<rank_result>& results);
std::vector<rank_result> decode_results(const std::string& text);

}  // namespace troupe::collectives::perf
