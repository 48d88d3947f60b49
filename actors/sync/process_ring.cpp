#include "actors/sync/process_ring.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include "collectives/allreduce.hpp"
#include "collectives/compressed_allreduce.hpp"
#include "collectives/inproc/shared_allreduce.hpp"
#include "collectives/shm/shm_link.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"

namespace troupe::actors {
namespace {

namespace coll = troupe::collectives;

// How long ring ranks have to meet in the store when a generation's ring is first used: the
// agents learn of it only with the step's reduce call.
constexpr auto connect_within = std::chrono::seconds(10);

class process_ring_reducer final : public step_reducer {
 public:
  process_ring_reducer(std::vector<bool> agent, std::uint64_t job, std::uint64_t generation,
                       std::string prefix, std::shared_ptr<ring_record> record,
                       const std::string& codec, std::uint64_t block)
      : agent_(std::move(agent)),
        group_(static_cast<int>(agent_.size())),
        endpoints_(agent_.size()),
        job_(job),
        generation_(generation),
        prefix_(std::move(prefix)),
        record_(std::move(record)) {
    int next = 1;
    for (bool a : agent_) ring_rank_.push_back(a ? next++ : 0);
    ring_size_ = next;
    codec_name_ = codec;
    if (!codec.empty()) codec_.encoding = coll::make_codec(codec);
    block_ = block;
    if (block_ > 0 && !codec.empty())
      throw runtime_failure("allreduce: the canonical reduction takes no codec (got " + codec +
                            ")");
  }
  ~process_ring_reducer() override { ring_.close(); }

  int size() const override { return group_.size(); }
  int waiting() const override { return group_.waiting(); }

  reduce_outcome reduce(const reduce_call& c) override { return run(c, nullptr); }
  reduce_outcome reduce(const reduce_call& c, const agent_part& a) override { return run(c, &a); }

 private:
  reduce_outcome run(const reduce_call& c, const agent_part* agent) {
    const auto r = static_cast<std::size_t>(c.rank);
    if (c.op != coll::reduce_op::sum || !c.divide_by_total_weight)
      throw runtime_failure("allreduce: the process ring takes mean reductions only");
    if (r >= agent_.size() || agent_[r] != (agent != nullptr))
      throw runtime_failure("allreduce: member " + std::to_string(c.rank) +
                            (agent ? " reduces as an agent member but was placed here"
                                   : " reduces here but was placed in an agent"));
    if (agent) {
      std::lock_guard<std::mutex> lock(mu_);
      endpoints_[r] = agent->endpoint;
    }
    if (block_ > 0) return run_canonical(c, agent);
    // 1. The control process's members: the local sum (agent members add nothing).
    reduce_call local = c;
    local.divide_by_total_weight = false;
    local.sq_norm = false;  // of a partial sum: nobody's statistic
    if (agent) {
      local.data = nullptr;
      local.weight = 0.0;
    }
    const auto sum = group_.allreduce(local);
    // Every endpoint was offered before the barrier above.
    if (agent) agent->start(plan_for(r));
    // 2. Ring rank 0 (generation rank 0, always in this process) reduces with the agents.
    reduce_call hand = c;
    hand.divide_by_total_weight = false;
    hand.data = nullptr;
    hand.weight = 0.0;
    if (r == 0) {
      ring_buf_.assign(sum.values.begin(), sum.values.end());
      ring_buf_.push_back(static_cast<float>(sum.total_weight));
      connect(c);
      coll::close_on_throw guard{ring_};  // ring_buf_ may still be on the wire
      stopwatch sw;
      const double total = ring_reduce_mean(ring_, job_, generation_, ring_buf_, c.deadline,
                                            c.abort, codec_.encoding ? &codec_ : nullptr, c.gone);
      {
        std::lock_guard<std::mutex> lock(record_->mu);
        record_->seconds.push_back(sw.seconds());
        record_->sent = codec_.sent_bytes;
      }
      hand.data = ring_buf_.data();
      hand.weight = total;
    }
    // 3. The result, handed from rank 0 to the others (one input: its bits unchanged).
    const auto out = group_.allreduce(hand);
    return reduce_outcome{out.values, out.total_weight, c.sq_norm ? out.sq_norm : -1.0};
  }

  // The canonical reduction: the control process's blocks (c.blocks, the same on every member)
  // go into the ring as ring rank 0's; the members here only meet, before (every endpoint
  // offered) and after (rank 0 hands the mean over).
  reduce_outcome run_canonical(const reduce_call& c, const agent_part* agent) {
    if (!c.blocks)
      throw runtime_failure("allreduce: member " + std::to_string(c.rank) +
                            " reduces without the step's blocks in a canonical ring");
    const auto r = static_cast<std::size_t>(c.rank);
    coll::shared_allreduce_options meet;
    meet.rank = c.rank;
    meet.count = 0;  // a barrier
    meet.deadline = c.deadline;
    meet.abort = c.abort;
    meet.gone = c.gone;
    group_.allreduce(meet);
    if (agent) agent->start(plan_for(r));
    coll::shared_allreduce_options hand = meet;
    hand.count = c.count;
    hand.sq_norm = c.sq_norm;
    if (r == 0) {
      ring_buf_.assign(c.count, 0.0f);
      connect(c);
      coll::close_on_throw guard{ring_};  // ring_buf_ may still be on the wire
      stopwatch sw;
      const auto done = ring_reduce_blocks(
          ring_, job_, generation_, c.blocks->blocks, c.blocks->index, c.blocks->samples,
          span<float>{ring_buf_.data(), ring_buf_.size()}, c.deadline, c.abort, c.gone);
      {
        std::lock_guard<std::mutex> lock(record_->mu);
        record_->seconds.push_back(sw.seconds());
        record_->wire += done.wire_bytes;
      }
      hand.data = ring_buf_.data();
      hand.weight = static_cast<double>(done.total_samples);
    }
    // The mean, handed from rank 0 to the others (one input: its bits unchanged).
    const auto out = group_.allreduce(hand);
    return reduce_outcome{out.values, out.total_weight, c.sq_norm ? out.sq_norm : -1.0};
  }

  ring_plan plan_for(std::size_t r) {
    std::lock_guard<std::mutex> lock(mu_);
    ring_plan p;
    p.prefix = prefix_;
    p.job = job_;
    p.generation = generation_;
    p.rank = ring_rank_[r];
    p.size = ring_size_;
    p.transport = transport_locked();
    p.block = block_;
    return p;
  }

  // This host's transports only when every agent member's own link is ipc (all on this host,
  // over loopback). Decided once per generation (the endpoints are all offered by then: plans
  // are made after the first stage's barrier), not per member and step: it reads /proc.
  ring_transport transport_locked() {
    if (transport_) return *transport_;
    transport_ = coll::cross_memory_attach_allowed() ? ring_transport::shm : ring_transport::ipc;
    for (std::size_t r = 0; r < agent_.size(); ++r)
      if (agent_[r] && !endpoints_[r].ipc) transport_ = ring_transport::tcp;
    return *transport_;
  }

  void connect(const reduce_call& c) {
    const auto deadline = c.deadline;
    if (connected_) return;
    ring_transport transport;
    std::string host;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const auto first = std::find_if(endpoints_.begin(), endpoints_.end(),
                                      [](const ring_endpoint& e) { return e.store != nullptr; });
      if (first == endpoints_.end())
        throw runtime_failure("allreduce: no agent member offered the run's store");
      store_ = first->store;
      transport = transport_locked();
      host = first->bind_host;
    }
    ring_ = connect_ring(transport, 0, ring_size_, prefix_, *store_, host,
                         std::max(deadline, steady::now() + connect_within), block_ > 0, c.abort,
                         c.gone);
    connected_ = true;
    std::lock_guard<std::mutex> lock(record_->mu);
    record_->ranks = ring_size_;
    record_->transport = name_of(transport);
    record_->codec = codec_name_;
    record_->bytes = ring_buf_.size() * sizeof(float);
  }

  std::vector<bool> agent_;
  coll::shared_allreduce_group group_;
  std::mutex mu_;
  std::vector<ring_endpoint> endpoints_;     // offered by agent members (guarded by mu_)
  std::vector<int> ring_rank_;               // per member: its agent's ring rank (0: none)
  std::optional<ring_transport> transport_;  // guarded by mu_
  int ring_size_ = 1;
  std::uint64_t job_, generation_;
  std::string prefix_;
  std::shared_ptr<ring_record> record_;
  // Rank 0's alone.
  std::shared_ptr<coll::store> store_;
  coll::communicator ring_;
  bool connected_ = false;
  std::vector<float> ring_buf_;
  std::string codec_name_;
  std::uint64_t block_ = 0;  // the canonical reduction's (0: none)
  ring_codec codec_;         // rank 0's: its error feedback lives as long as this generation's ring
};

}  // namespace

std::shared_ptr<step_reducer> make_process_ring_reducer(
    std::vector<bool> agent, std::uint64_t job, std::uint64_t generation, std::string prefix,
    std::shared_ptr<ring_record> record, const std::string& codec, std::uint64_t block) {
  if (std::none_of(agent.begin(), agent.end(), [](bool a) { return a; }))
    throw runtime_failure("allreduce: a process ring needs a member in an agent");
  return std::make_shared<process_ring_reducer>(std::move(agent), job, generation,
                                                std::move(prefix), std::move(record), codec, block);
}

coll::communicator connect_ring(ring_transport transport, int rank, int size,
                                const std::string& prefix, coll::store& store,
                                const std::string& host, steady::time_point deadline,
                                bool full_mesh, std::shared_ptr<const coll::abort_signal> abort,
                                std::shared_ptr<const coll::abort_signal> gone) {
  std::vector<int> peers;
  if (full_mesh)
    for (int p = 0; p < size; ++p)
      if (p != rank) peers.push_back(p);
  if (transport == ring_transport::shm) {
    coll::shm_connect_options o;
    coll::meet_at(o, store, rank, size, prefix, deadline);
    o.peers = peers;
    o.abort = abort;
    o.gone = gone;
    return coll::shm_connect(o);
  }
  coll::zmq_connect_options o;
  coll::meet_at(o, store, rank, size, prefix, deadline);
  o.peers = peers;
  o.abort = std::move(abort);
  o.gone = std::move(gone);
  o.scheme = transport == ring_transport::ipc ? coll::zmq_scheme::ipc : coll::zmq_scheme::tcp;
  o.host = host;
  return coll::zmq_connect(o);
}

namespace {

// The part of every ring operation's options that names the ring, the op's tag and its waits.
void on_ring(coll::op_options& o, coll::communicator& ring, std::uint64_t job,
             std::uint64_t generation, steady::time_point deadline,
             std::shared_ptr<const coll::abort_signal> abort,
             std::shared_ptr<const coll::abort_signal> gone) {
  o.comm = &ring;
  o.job = job;
  o.generation = generation;
  o.deadline = deadline;
  o.abort = std::move(abort);
  o.gone = std::move(gone);
}

}  // namespace

coll::block_allreduce_result ring_reduce_blocks(
    coll::communicator& ring, std::uint64_t job, std::uint64_t generation,
    std::vector<const float*> blocks, std::vector<std::uint32_t> index, std::uint64_t samples,
    span<float> out, steady::time_point deadline, std::shared_ptr<const coll::abort_signal> abort,
    std::shared_ptr<const coll::abort_signal> gone) {
  coll::block_allreduce_options o;
  on_ring(o, ring, job, generation, deadline, std::move(abort), std::move(gone));
  o.count = out.size();
  o.blocks = std::move(blocks);
  o.index = std::move(index);
  o.samples = samples;
  o.out = out;
  return coll::block_allreduce(o);
}

double ring_reduce_mean(coll::communicator& ring, std::uint64_t job, std::uint64_t generation,
                        std::vector<float>& data, steady::time_point deadline,
                        std::shared_ptr<const coll::abort_signal> abort, ring_codec* codec,
                        std::shared_ptr<const coll::abort_signal> gone) {
  coll::allreduce_options o;
  on_ring(o, ring, job, generation, deadline, abort, gone);
  o.data = span<float>{data.data(), data.size()};
  if (codec && codec->encoding) {
    // The count exactly, alone; the sums through the codec.
    float weight = data.back();
    o.data = span<float>{&weight, 1};
    coll::allreduce(o);
    coll::compressed_allreduce_options c;
    on_ring(c, ring, job, generation, deadline, std::move(abort), std::move(gone));
    c.data = span<float>{data.data(), data.size() - 1};
    c.encoding = codec->encoding.get();
    c.state = &codec->state;
    c.sent_bytes = &codec->sent_bytes;
    coll::compressed_allreduce(c);
    data.back() = weight;
  } else {
    coll::allreduce(o);
  }
  const double total = static_cast<double>(data.back());
  const float d = static_cast<float>(total);
  const std::size_t n = data.size() - 1;
  for (std::size_t i = 0; i < n; ++i) data[i] /= d;
  return total;
}

}  // namespace troupe::actors
