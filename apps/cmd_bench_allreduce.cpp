// `troupe bench allreduce`: the nccl-tests style allreduce benchmark over Troupe's transports.
// inproc ranks are threads of this process; ipc, tcp and shm ranks are separate processes
// (this executable again, with the hidden --rank-of flag), which rendezvous through a store
// actor this process serves over ZeroMQ, run the sweep, and hand their figures back through it.
#include <sys/wait.h>
#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <thread>

#include "apps/args.hpp"
#include "apps/command.hpp"
#include "collectives/inproc/inproc_link.hpp"
#include "collectives/inproc/shared_allreduce.hpp"
#include "collectives/memory_store.hpp"
#include "collectives/perf.hpp"
#include "collectives/shm/shm_link.hpp"
#include "collectives/store_actor.hpp"
#include "collectives/zmq/zmq_link.hpp"
#include "collectives/zmq_store.hpp"
#include "core/error.hpp"

namespace troupe::apps {
namespace {

namespace coll = troupe::collectives;
using namespace std::chrono_literals;

const char* usage =
    "usage: troupe bench allreduce --ranks N --transport inproc|inproc-ring|ipc|tcp|shm\n"
    "                              [--min 4K] [--max 256M] [--step-factor 2] [--iters 20]\n"
    "                              [--warmup 5] [--chunk 1M] [--codec NAME] [--json FILE]\n"
    "                              [--timeout-ms 60000] [--curve on|off]\n"
    "                              [--algorithm auto|ring|one-step|two-step]\n\n"
    "Allreduce (sum of float32) over N ranks: threads for inproc, processes otherwise.\n"
    "inproc is the shared in-process allreduce the runtime uses (each rank reduces one segment\n"
    "of every rank's buffer into one shared result); inproc-ring is the ring over in-process\n"
    "links (every rank ends with its own copy).\n"
    "Prints the nccl-tests columns: size, count, type, time (median over iterations, max over\n"
    "ranks), algbw = bytes/time, busbw = algbw * 2(n-1)/n, #wrong (elements differing from the\n"
    "exact sum), and memcpy bandwidth of the same buffers measured in the same run.\n"
    "Codecs: fp16, bf16, topk[:ratio], powersgd[:rank] (compressed allreduce).\n"
    "ipc and tcp links use ZeroMQ CURVE as the runtime's do; --curve off measures the bare\n"
    "transport.\n"
    "--algorithm picks the form on a ring transport: auto (by size: one step up to 16K, two\n"
    "steps up to 256K where every rank is linked, the ring above), or one of them always.";

// --rank-of, --store and --session are how a rank process learns its place (main starts them).
const flag_set flags{{"ranks", "transport", "min", "max", "step-factor", "iters", "warmup", "chunk",
                      "codec", "json", "timeout-ms", "curve", "algorithm"},
                     {},
                     {},
                     {"rank-of", "store", "session"}};

// Threads over the shared buffers, threads over the in-process ring, or processes.
enum class transport { inproc, inproc_ring, ipc, tcp, shm };
// The allreduce form on a ring transport: by size, or one form always.
enum class algorithm { automatic, ring, one_step, two_step };

}  // namespace
}  // namespace troupe::apps

namespace troupe {
TROUPE_SPELLINGS(apps::transport, shm, "inproc", "inproc-ring", "ipc", "tcp", "shm");
TROUPE_SPELLINGS(apps::algorithm, two_step, "auto", "ring", "one-step", "two-step");
}  // namespace troupe

namespace troupe::apps {
namespace {

struct setup {
  int ranks = 2;
  transport via = transport::inproc;
  coll::perf::params perf;
  std::string json;
  bool curve = true;  // ZeroMQ links encrypted, as the runtime's are
};

setup parse(const args& a) {
  setup s;
  s.ranks = static_cast<int>(a.get_int("ranks", 2));
  if (s.ranks < 1 || s.ranks > 64) throw input_error("--ranks must be between 1 and 64");
  s.via = a.get_enum("transport", transport::inproc);
  const auto curve = a.get_or("curve", "on");
  if (curve != "on" && curve != "off") throw input_error("--curve must be on or off");
  s.curve = curve == "on";
  s.perf.min_bytes = parse_size(a.get_or("min", "4K"), "--min");
  s.perf.max_bytes = parse_size(a.get_or("max", "256M"), "--max");
  s.perf.step_factor = a.get_double("step-factor", 2.0);
  s.perf.iters = static_cast<int>(a.get_int("iters", 20));
  s.perf.warmup = static_cast<int>(a.get_int("warmup", 5));
  s.perf.chunk_bytes = static_cast<std::size_t>(parse_size(a.get_or("chunk", "1M"), "--chunk"));
  s.perf.codec = a.get_or("codec", "");
  const algorithm form = a.get_enum("algorithm", algorithm::automatic);
  constexpr std::size_t always = std::size_t{1} << 40;
  if (form != algorithm::automatic) {
    s.perf.one_step_bytes = form == algorithm::one_step ? always : 0;
    s.perf.two_step_bytes = form == algorithm::ring ? 0 : always;
  }
  s.perf.op_timeout_ms = a.get_int("timeout-ms", 60000);
  s.json = a.get_or("json", "");
  if (s.perf.min_bytes < 4 || s.perf.max_bytes < s.perf.min_bytes)
    throw input_error("--min must be at least 4 and --max at least --min");
  if (s.perf.step_factor < 1.0) throw input_error("--step-factor must be at least 1");
  if (s.perf.iters < 1 || s.perf.warmup < 0) throw input_error("--iters >= 1, --warmup >= 0");
  if (s.perf.chunk_bytes < 64 || s.perf.chunk_bytes % 64)
    throw input_error("--chunk must be a multiple of 64 bytes");
  if (!s.perf.codec.empty()) coll::make_codec(s.perf.codec);  // fails early on a bad name
  if (form != algorithm::automatic && s.via == transport::inproc)
    throw input_error("--algorithm needs a ring transport: inproc-ring, ipc, tcp or shm");
  if (!s.perf.codec.empty() && s.via == transport::inproc)
    throw input_error("--codec needs a ring: use --transport inproc-ring (or ipc, tcp, shm)");
  return s;
}

coll::communicator connect(const setup& s, coll::store& rendezvous, int rank,
                           const std::string& session) {
  const auto deadline = coll::deadline_in(30s);
  if (s.via == transport::shm) {
    coll::shm_connect_options o;
    coll::meet_at(o, rendezvous, rank, s.ranks, session, deadline);
    return coll::shm_connect(o);
  }
  coll::zmq_connect_options o;
  coll::meet_at(o, rendezvous, rank, s.ranks, session, deadline);
  o.scheme = s.via == transport::tcp ? coll::zmq_scheme::tcp : coll::zmq_scheme::ipc;
  o.curve = s.curve;
  return coll::zmq_connect(o);
}

// A rank process: rendezvous, run the sweep, publish the figures (or the error) in the store.
int run_child(const setup& s, int rank, const std::string& store_address,
              const std::string& session) {
  coll::remote_store rendezvous{store_address};
  const std::string key = session + "/result/" + std::to_string(rank);
  try {
    coll::communicator comm = connect(s, rendezvous, rank, session);
    rendezvous.set(key, "ok\n" + coll::perf::encode_results(coll::perf::run_rank(comm, s.perf)));
    return exit_ok;
  } catch (const std::exception& e) {
    rendezvous.set(key, std::string{"error\nrank "} + std::to_string(rank) + ": " + e.what());
    return exit_failed;
  }
}

// Ranks as threads: the shared in-process allreduce, or the ring over in-process links.
std::vector<std::vector<coll::perf::rank_result>> run_threads(const setup& s) {
  coll::inproc_hub hub{s.ranks};
  coll::shared_allreduce_group group{s.ranks};
  std::vector<std::vector<coll::perf::rank_result>> per_rank(static_cast<std::size_t>(s.ranks));
  std::vector<std::string> errors(static_cast<std::size_t>(s.ranks));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < s.ranks; ++rank)
    threads.emplace_back([&, rank] {
      coll::communicator comm = hub.connect(rank);
      auto shared = [&](std::size_t count, const float* data) {
        coll::shared_allreduce_options o;
        o.rank = rank;
        o.data = data;
        o.count = count;
        o.deadline = coll::deadline_in(std::chrono::milliseconds(s.perf.op_timeout_ms));
        return group.allreduce(o).values;
      };
      try {
        auto& out = per_rank[static_cast<std::size_t>(rank)];
        if (s.via == transport::inproc_ring)
          out = coll::perf::run_rank(comm, s.perf);
        else
          out = coll::perf::run_rank(
              rank, s.ranks, s.perf,
              [&](span<float> data) { return shared(data.size(), data.data()); },
              [&] { shared(0, nullptr); });
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(rank)] = e.what();
        comm.close();  // the others fail at once instead of at their deadline
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (!e.empty()) throw runtime_failure(e);
  return per_rank;
}

std::vector<std::vector<coll::perf::rank_result>> run_processes(
    const setup& s, const std::vector<std::string>& argv) {
  caf::actor_system_config cfg;
  coll::add_store_types(cfg);
  caf::actor_system sys{cfg};
  caf::actor store_actor = coll::spawn_store_actor(sys);
  std::vector<std::vector<coll::perf::rank_result>> per_rank(static_cast<std::size_t>(s.ranks));
  std::string failure;
  {
    coll::store_server server{sys, store_actor};
    coll::actor_store results{sys, store_actor};
    const std::string session = "bench-" + std::to_string(::getpid()) + "-" +
                                std::to_string(std::random_device{}() % 100000);
    std::vector<pid_t> children;
    for (int rank = 0; rank < s.ranks; ++rank) {
      std::vector<std::string> words{"troupe", "bench", "allreduce"};
      words.insert(words.end(), argv.begin(), argv.end());
      for (const std::string& extra :
           {std::string{"--rank-of"}, std::to_string(rank), std::string{"--store"},
            server.address(), std::string{"--session"}, session})
        words.push_back(extra);
      std::vector<char*> c_argv;
      for (auto& w : words) c_argv.push_back(w.data());
      c_argv.push_back(nullptr);
      const pid_t pid = ::fork();
      if (pid < 0) throw runtime_failure("bench: fork failed");
      if (pid == 0) {
        ::execv("/proc/self/exe", c_argv.data());
        ::_exit(127);
      }
      children.push_back(pid);
    }
    // Collect: a result key per rank; a rank that dies without one fails the run at once.
    const auto deadline = coll::deadline_in(std::chrono::milliseconds(
        s.perf.op_timeout_ms * static_cast<long long>(s.perf.sizes().size()) * 4 + 60000));
    std::vector<bool> have(static_cast<std::size_t>(s.ranks), false);
    std::size_t got = 0;
    while (got < have.size() && failure.empty()) {
      for (int rank = 0; rank < s.ranks; ++rank) {
        if (have[static_cast<std::size_t>(rank)]) continue;
        auto text = results.get(session + "/result/" + std::to_string(rank));
        if (!text) continue;
        have[static_cast<std::size_t>(rank)] = true;
        ++got;
        if (text->rfind("ok\n", 0) != 0) {
          failure = text->substr(text->find('\n') + 1);
          break;
        }
        per_rank[static_cast<std::size_t>(rank)] = coll::perf::decode_results(text->substr(3));
      }
      for (std::size_t i = 0; i < children.size() && failure.empty(); ++i) {
        int status = 0;
        if (children[i] > 0 && ::waitpid(children[i], &status, WNOHANG) == children[i]) {
          children[i] = -1;
          if (!have[i] && !results.get(session + "/result/" + std::to_string(i)))
            failure = "rank " + std::to_string(i) + " (pid exited with status " +
                      std::to_string(status) + ") died without reporting";
        }
      }
      if (troupe::steady::now() > deadline) failure = "bench: ranks did not finish in time";
      if (got < have.size() && failure.empty()) std::this_thread::sleep_for(20ms);  // polling
    }
    for (pid_t pid : children)
      if (pid > 0) {
        if (!failure.empty()) ::kill(pid, SIGTERM);
        ::waitpid(pid, nullptr, 0);
      }
  }
  caf::anon_send_exit(store_actor, caf::exit_reason::user_shutdown);
  if (!failure.empty()) throw runtime_failure(failure);
  return per_rank;
}

int bench_allreduce(const std::vector<std::string>& argv) {
  const args a{argv, flags};
  const setup s = parse(a);
  if (a.has("rank-of"))
    return run_child(s, static_cast<int>(a.get_int("rank-of", 0)), a.get_or("store", ""),
                     a.get_or("session", "bench"));
  std::cout << "# troupe bench allreduce: ranks " << s.ranks << ", transport " << name_of(s.via)
            << ", iters " << s.perf.iters << ", warmup " << s.perf.warmup << ", chunk "
            << s.perf.chunk_bytes << ", codec " << (s.perf.codec.empty() ? "none" : s.perf.codec)
            << "\n# busbw = algbw * 2(n-1)/n; time = max over ranks of the median iteration\n"
            << coll::perf::table_header() << std::flush;
  const bool threads = s.via == transport::inproc || s.via == transport::inproc_ring;
  const auto per_rank = threads ? run_threads(s) : run_processes(s, argv);
  const auto rows = coll::perf::combine(per_rank);
  long long wrong = 0;
  for (const auto& r : rows) {
    std::cout << coll::perf::table_line(r);
    wrong += r.wrong;
  }
  if (threads && !rows.empty() && rows.back().memcpy_GBps > 0)
    std::printf("# largest size: busbw / memcpy = %.3f\n",
                rows.back().busbw_GBps / rows.back().memcpy_GBps);
  std::cout << "# " << (wrong == 0 ? "OK" : "FAILED") << ": " << wrong << " wrong elements\n";
  if (!s.json.empty()) {
    std::ofstream out{s.json};
    if (!out) throw input_error("--json: cannot write " + s.json);
    out << coll::perf::to_json(rows, s.ranks, name_of(s.via), s.perf.codec);
  }
  return wrong == 0 ? exit_ok : exit_failed;
}

const command_registrar registrar{
    command{"bench allreduce", "allreduce benchmark (nccl-tests columns) over inproc/ipc/tcp/shm",
            usage, bench_allreduce, flags}};

}  // namespace
}  // namespace troupe::apps
