#include "collectives/inproc/shared_allreduce.hpp"

#include "collectives/inproc/reduce_kernel.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace troupe::collectives {
namespace {

// Pieces of work (a multiple of 16 floats, so two ranks never write one cache line): large
// enough that the shared counter is touched rarely, small enough to balance the ranks (a model
// of 235k parameters is 15 pieces: an optimizer applied piece by piece splits evenly).
constexpr std::size_t piece_elems = std::size_t{1} << 14;

peer_info peer_of(int rank) {
  return peer_info{rank, "inproc-shared:" + std::to_string(rank)};
}

struct slot {
  const float* data = nullptr;
  const std::vector<const float*>* inputs = nullptr;
  std::size_t count = 0;
  reduce_op op = reduce_op::sum;
  double weight = 0.0;
  bool divide = false;
  bool sq_norm = false;
  const std::function<void()>* on_open = nullptr;  // the caller's, valid until it returns
  const std::function<void(const float*, std::size_t, std::size_t)>* on_piece = nullptr;
};

// Above this many result bytes the result goes to memory with non-temporal stores: it does not
// fit in cache anyway, and a normal store first reads the line it overwrites (read for
// ownership), a third more memory traffic for a two-rank sum. glibc's memcpy, the reference, does
// the same for large copies.
constexpr std::size_t stream_above_bytes = std::size_t{4} << 20;

}  // namespace

class shared_allreduce_state {
 public:
  explicit shared_allreduce_state(int size)
      : size_(size), slots_(static_cast<std::size_t>(size)), arrived_(slots_.size(), false) {}

  int size() const { return size_; }

  int waiting() const {
    std::lock_guard<std::mutex> guard{mutex_};
    return waiting_;
  }
  bool broken() const {
    std::lock_guard<std::mutex> guard{mutex_};
    return broken_;
  }

  shared_allreduce_result allreduce(const shared_allreduce_options& o) {
    op_context ctx;
    ctx.op_name = "allreduce (in-process shared)";
    ctx.deadline = o.deadline;
    ctx.abort = o.abort;
    ctx.gone = o.gone;
    if (o.rank < 0 || o.rank >= size_)
      throw input_error("shared allreduce: rank " + std::to_string(o.rank) +
                        " outside a group of " + std::to_string(size_));
    const auto me = static_cast<std::size_t>(o.rank);
    {
      std::lock_guard<std::mutex> guard{mutex_};
      slots_[me] = slot{o.data,
                        o.inputs,
                        o.count,
                        o.op,
                        o.weight,
                        o.divide_by_total_weight,
                        o.sq_norm,
                        o.on_open ? &o.on_open : nullptr,
                        o.on_piece ? &o.on_piece : nullptr};
    }
    // Barrier 1: every input is posted; the last arriver checks them and sizes the result.
    barrier(o.rank, ctx, "inputs of", [&] { return open_op(); });

    // Reduce pieces of the result from every rank's buffer into the shared result. Pieces are
    // taken from a shared counter rather than one fixed segment per rank: on a machine with more
    // ranks than free cores, the ranks that run do the work of those that wait for a core, so
    // one descheduled thread does not hold up the op. Which rank reduces a piece does not change
    // its bits (the order over the inputs is fixed).
    const std::size_t count = op_count_;
    float* out = results_[op_slot_].data();
    reduce_spec spec;
    spec.op = op_;
    spec.divide = divide_ && op_ == reduce_op::sum;
    spec.divisor = divisor_;
    // A piece that on_piece reads right away stays in cache: no streaming then.
    spec.stream = count * sizeof(float) > stream_above_bytes && !on_piece_;
    for (;;) {
      const std::size_t piece = next_piece_.fetch_add(1, std::memory_order_relaxed);
      const std::size_t lo = piece * piece_elems;
      if (lo >= count) break;
      const std::size_t n = std::min(count, lo + piece_elems) - lo;
      reduce_into(out + lo, inputs_.data(), inputs_.size(), lo, n, spec);
      if (sq_norm_) piece_sq_[piece] = sq_norm(out + lo, n);
      if (on_piece_) (*on_piece_)(out, lo, n);
    }
    // Streamed stores are visible before barrier 2 releases the readers.
    if (spec.stream) reduce_publish();
    {
      std::lock_guard<std::mutex> guard{mutex_};
      --reducing_;
    }
    changed_.notify_all();

    // Barrier 2: every segment is reduced; the inputs are free again. The pieces' norms were
    // written before each reducer's unlock above, and are read after this barrier. A committed
    // op (on_piece) waits here for the others' pieces only, which no abort may cut short.
    op_context finishing = ctx;
    if (on_piece_) {
      finishing.abort.reset();
      finishing.gone.reset();
      finishing.deadline = steady::time_point::max();
    }
    barrier(o.rank, finishing, "the reduction by", [] { return std::string{}; });
    double sq = 0.0;
    if (sq_norm_)
      for (double part : piece_sq_) sq += part;
    return shared_allreduce_result{span<const float>{results_[op_slot_].data(), count},
                                   total_weight_, sq};
  }

 private:
  // Runs under the lock by the last rank of barrier 1. Returns an error text (then the op fails
  // on every rank) or "".
  std::string open_op() {
    const slot& first = slots_[0];
    for (const auto& s : slots_)
      if (s.count != first.count || s.op != first.op || s.divide != first.divide ||
          s.sq_norm != first.sq_norm || !s.on_piece != !first.on_piece || s.inputs != first.inputs)
        return "ranks disagree on count, op, division, norm, inputs or hooks (every rank must "
               "make the same call)";
    if (first.inputs && first.op != reduce_op::sum)
      return "a list of inputs is summed only (op sum)";
    op_count_ = first.count;
    op_ = first.op;
    divide_ = first.divide;
    // Every rank has arrived here, so none still adds up the last op's parts.
    sq_norm_ = first.sq_norm && op_ == reduce_op::sum;
    piece_sq_.assign(sq_norm_ ? (op_count_ + piece_elems - 1) / piece_elems : 0, 0.0);
    total_weight_ = 0.0;
    inputs_.clear();
    for (const auto& s : slots_) {
      total_weight_ += s.weight;
      if (s.data && !first.inputs) inputs_.push_back(s.data);
    }
    if (first.inputs) inputs_ = *first.inputs;
    if (divide_ && !(total_weight_ > 0.0))
      return "divide_by_total_weight with a total weight of " + std::to_string(total_weight_);
    divisor_ = static_cast<float>(total_weight_);
    // Before anything of the op is set up: what it throws fails the op on every rank.
    if (first.on_open) {
      try {
        (*first.on_open)();
      } catch (const std::exception& e) {
        return std::string("the op's on_open failed: ") + e.what();
      }
    }
    op_slot_ = (op_slot_ + 1) % 2;
    if (results_[op_slot_].size() < op_count_) results_[op_slot_].resize(op_count_);
    reducing_ = size_;
    next_piece_.store(0, std::memory_order_relaxed);
    // Rank 0's hook: rank 0 waits in barrier 1 now and returns only after barrier 2, which
    // every rank reaches after its last piece, so it outlives its use.
    on_piece_ = first.on_piece;
    return {};
  }

  // Waits until all ranks arrived; the last one runs on_complete (under the lock) first.
  template <class OnComplete>
  void barrier(int rank, const op_context& ctx, const char* waiting_for, OnComplete on_complete) {
    std::unique_lock<std::mutex> lock{mutex_};
    if (broken_) fail_broken(lock, rank);
    const std::uint64_t my_phase = phase_.load(std::memory_order_relaxed);
    arrived_[static_cast<std::size_t>(rank)] = true;
    if (++arrived_count_ == size_) {
      const std::string error = on_complete();
      if (!error.empty()) {
        broken_ = true;
        reason_ = error;
        changed_.notify_all();
        throw collective_error(failure_kind::protocol, peer_of(rank), ctx.op_name + ": " + error);
      }
      std::fill(arrived_.begin(), arrived_.end(), false);
      arrived_count_ = 0;
      phase_.fetch_add(1, std::memory_order_release);
      changed_.notify_all();
      return;
    }
    ++waiting_;
    lock.unlock();
    poll_briefly([&] { return phase_.load(std::memory_order_acquire) != my_phase; });
    lock.lock();
    for (;;) {
      // completed: success even if an abort comes now
      if (phase_.load(std::memory_order_relaxed) != my_phase) break;
      int missing = 0;
      while (missing < size_ && arrived_[static_cast<std::size_t>(missing)]) ++missing;
      try {
        ctx.check(peer_of(missing), waiting_for);
      } catch (const collective_error&) {
        --waiting_;
        broken_ = true;
        reason_ = std::string{"rank "} + std::to_string(rank) + " left";
        changed_.notify_all();
        wait_readers(lock);
        throw;
      }
      // Our own abort or deadline is the better error; otherwise another rank broke the group.
      if (broken_) {
        --waiting_;
        fail_broken(lock, rank);
      }
      changed_.wait_until(lock, ctx.slice_end());
    }
    --waiting_;
  }

  // No rank may return while another still reads its input: reductions are pure compute, so
  // this wait is short and bounded.
  void wait_readers(std::unique_lock<std::mutex>& lock) {
    changed_.wait(lock, [&] { return reducing_ <= 0; });
  }

  [[noreturn]] void fail_broken(std::unique_lock<std::mutex>& lock, int rank) {
    wait_readers(lock);
    throw collective_error(failure_kind::aborted, peer_of(rank),
                           "allreduce (in-process shared): the group is broken (" + reason_ +
                               "); a new generation needs a new group");
  }

  const int size_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<slot> slots_;
  std::vector<bool> arrived_;
  int arrived_count_ = 0;
  int waiting_ = 0;
  int reducing_ = 0;
  // Written under the lock; read without it while a rank polls at a barrier.
  std::atomic<std::uint64_t> phase_{0};
  bool broken_ = false;
  std::string reason_;
  // The op between barrier 1 and barrier 2 (written by the last arriver under the lock, read
  // after the barrier: the lock orders the accesses).
  std::size_t op_count_ = 0;
  reduce_op op_ = reduce_op::sum;
  bool divide_ = false;
  float divisor_ = 1.0f;
  double total_weight_ = 0.0;
  std::vector<const float*> inputs_;
  std::atomic<std::size_t> next_piece_{0};
  bool sq_norm_ = false;
  std::vector<double> piece_sq_;  // |piece|^2 by piece, when the op asked for the norm
  // Rank 0's on_piece for the op in flight, or null.
  const std::function<void(const float*, std::size_t, std::size_t)>* on_piece_ = nullptr;
  std::vector<float> results_[2];
  std::size_t op_slot_ = 1;
};

shared_allreduce_group::shared_allreduce_group(int size)
    : rank_group(size, "shared_allreduce_group"),
      state_(std::make_unique<shared_allreduce_state>(size)) {}
shared_allreduce_group::~shared_allreduce_group() = default;
shared_allreduce_result shared_allreduce_group::allreduce(const shared_allreduce_options& o) {
  return state_->allreduce(o);
}
int shared_allreduce_group::waiting() const {
  return state_->waiting();
}
bool shared_allreduce_group::broken() const {
  return state_->broken();
}

}  // namespace troupe::collectives
