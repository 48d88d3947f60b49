#include "actors/agents/hosted_replica.hpp"

#include <algorithm>
#include <chrono>

#include "actors/sync/process_ring.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"

namespace troupe::actors {
namespace {

// How long this end waits for the other ring ranks to meet in the store.
constexpr auto connect_within = std::chrono::seconds(10);

}  // namespace

hosted_replica::hosted_replica(models::optimizer_spec spec, std::size_t params,
                               const std::string& codec)
    : spec_(std::move(spec)), count_(params) {
  if (!codec.empty()) codec_.encoding = collectives::make_codec(codec);
}

hosted_replica::~hosted_replica() {
  ring_.close();
}

void hosted_replica::load(std::vector<float> params, std::int64_t steps,
                          std::vector<std::vector<float>> buffers) {
  loaded_ = false;
  if (params.size() != count_)
    throw input_error("replica of " + std::to_string(params.size()) +
                      " parameters for a model of " + std::to_string(count_));
  auto opt = models::make_optimizer(spec_, count_);
  auto state = opt->state();
  // A fresh optimizer in the control process may not have stepped yet: nothing to load.
  if (steps > 0 || !buffers.empty()) {
    state.step = steps;
    state.buffers = std::move(buffers);
    opt->load_state(state);
  }
  optimizer_ = std::move(opt);
  params_ = std::move(params);
  kept_.assign(count_ + 1, 0.0f);
  kept_blocks_.clear();
  kept_index_.clear();
  kept_step_ = -1;
  loaded_ = true;
}

float* hosted_replica::slice_blocks(std::int64_t step, std::uint64_t first, std::size_t blocks) {
  if (kept_step_ != step) {
    kept_blocks_.clear();
    kept_index_.clear();
    kept_step_ = step;
  }
  if (first + blocks > UINT32_MAX)
    throw input_error("blocks " + std::to_string(first) + " to " + std::to_string(first + blocks) +
                      " of a step: past the block count's range");
  const std::size_t at = kept_blocks_.size();
  kept_blocks_.resize(at + blocks * count_);
  for (std::size_t b = 0; b < blocks; ++b)
    kept_index_.push_back(static_cast<std::uint32_t>(first + b));
  return kept_blocks_.data() + at;
}

float* hosted_replica::slice_gradient(std::int64_t step) {
  if (kept_step_ != step) return kept_.data();
  scratch_.resize(count_);
  return scratch_.data();
}

void hosted_replica::keep(std::int64_t step) {
  if (kept_step_ == step) {
    for (std::size_t i = 0; i < count_; ++i) kept_[i] += scratch_[i];
    return;
  }
  kept_step_ = step;
}

double hosted_replica::reduce(const ring_turn& t, collectives::store& store,
                              const std::string& data_host,
                              std::shared_ptr<const collectives::abort_signal> abort) {
  if (!loaded_) throw runtime_failure("no replica here: the control process must send it first");
  std::shared_ptr<collectives::abort_signal> given_up;
  {
    std::lock_guard<std::mutex> lock(abort_mu_);
    turn_prefix_ = t.prefix;
    turn_abort_ = given_up = std::make_shared<collectives::abort_signal>();
    if (std::find(given_up_.begin(), given_up_.end(), t.prefix) != given_up_.end())
      given_up->abort("the control process gave up ring " + t.prefix);
  }
  loaded_ = false;  // until this reduction has applied
  const auto deadline = steady::now() + std::chrono::duration_cast<steady::duration>(
                                            std::chrono::duration<double>(t.deadline_seconds));
  if (t.prefix != ring_prefix_) {
    ring_.close();
    ring_prefix_.clear();
    ring_ = connect_ring(t.transport, t.rank, t.size, t.prefix, store, data_host,
                         std::max(deadline, steady::now() + connect_within), t.block > 0, abort,
                         given_up);
    ring_prefix_ = t.prefix;
  }
  const bool kept_this_step = t.contributed && kept_step_ == t.step;
  if (!kept_this_step) std::fill(kept_.begin(), kept_.end() - 1, 0.0f);
  kept_.back() = t.contributed ? static_cast<float>(t.samples) : 0.0f;
  kept_step_ = -1;
  stopwatch sw;
  try {
    collectives::close_on_throw guard{ring_};
    double total = 0.0;
    if (t.block > 0) {
      std::vector<const float*> blocks;
      if (kept_this_step)
        for (std::size_t k = 0; k < kept_index_.size(); ++k)
          blocks.push_back(kept_blocks_.data() + k * count_);
      const auto done =
          ring_reduce_blocks(ring_, t.job, t.generation, std::move(blocks),
                             kept_this_step ? kept_index_ : std::vector<std::uint32_t>{},
                             kept_this_step ? static_cast<std::uint64_t>(t.samples) : 0,
                             span<float>{kept_.data(), count_}, deadline, abort, given_up);
      total = static_cast<double>(done.total_samples);
    } else {
      total = ring_reduce_mean(ring_, t.job, t.generation, kept_, deadline, abort,
                               codec_.encoding ? &codec_ : nullptr, given_up);
    }
    if (total != static_cast<double>(t.total_samples))
      throw runtime_failure("ring reduced " + std::to_string(total) + " samples where step " +
                            std::to_string(t.step) + " has " + std::to_string(t.total_samples));
  } catch (...) {
    ring_prefix_.clear();  // a failed ring is not used again
    throw;
  }
  const double seconds = sw.seconds();
  optimizer_->step(params_.data(), kept_.data());
  loaded_ = true;
  return seconds;
}

void hosted_replica::abort_ring(const std::string& prefix) {
  std::lock_guard<std::mutex> lock(abort_mu_);
  if (turn_abort_ && turn_prefix_ == prefix)
    turn_abort_->abort("the control process gave up ring " + prefix);
  given_up_.push_back(prefix);
  if (given_up_.size() > 8) given_up_.erase(given_up_.begin());
}

}  // namespace troupe::actors
