// `sync: ps`: the parameter-server shards behind the job's synchronisation seam.
#include <caf/exit_reason.hpp>

#include "actors/checkpoint/checkpoint_state.hpp"
#include "actors/common/specs.hpp"
#include "actors/sync/job_sync.hpp"
#include "actors/sync/local_step.hpp"
#include "actors/sync/parameter_server.hpp"
#include "models/optimizer.hpp"

namespace troupe::actors {
namespace {

// The shards own the parameters' slices and the optimizer; they survive a member's loss (the
// job re-plans its slices) and hold everything a checkpoint needs.
class ps_sync final : public job_sync {
 public:
  ps_sync(const config::job_config& cfg, msg::job_id job) : cfg_(cfg), job_(job) {}

  void start(caf::event_based_actor* self, const std::shared_ptr<param_store>& store,
             const job_snapshot* resume) override {
    const models::optimizer_spec os = optimizer_spec_of(cfg_.optimizer);
    const auto slices = shard_slices(store->values.size(), cfg_.sync.ps_shards);
    for (std::size_t k = 0; k < slices.size(); ++k) {
      shard_spec ss;
      ss.job = job_;
      ss.generation = 1;
      ss.shard = static_cast<std::int32_t>(k);
      ss.offset = slices[k].first;
      ss.count = slices[k].second;
      ss.params = store;
      ss.optimizer = models::make_optimizer(os, ss.count);
      if (resume)
        ss.optimizer->load_state(slice_state(resume->parts.at(0)->optimizer, ss.offset, ss.count));
      ss.version = resume ? resume->step : 0;
      ss.job_actor = caf::actor_cast<caf::actor>(self);
      auto shard = self->spawn(parameter_server, std::move(ss));
      self->monitor(shard);
      shards_.push_back(shard);
    }
  }

  std::shared_ptr<param_store> params_for(std::size_t,
                                          const std::shared_ptr<param_store>& store) override {
    return store;
  }

  void open_generation(caf::event_based_actor* self, msg::job_id, msg::generation_id generation,
                       const generation_members&, bool first) override {
    // The shards start in generation 1 (their spec); later ones they follow.
    if (first) return;
    for (auto& s : shards_) self->send(s, msg::start_atom_v, generation);
  }

  int reduce(caf::event_based_actor* self, const reduce_round& round) override {
    for (auto& s : shards_) self->send(s, round.cmd, round.grads);
    return static_cast<int>(shards_.size());
  }

  bool grad_norm_from_applied() const override { return true; }

  std::optional<std::string> commit(std::int64_t, double, double, double) override { return {}; }

  bool survives_member_loss() const override { return true; }
  bool checkpoints() const override { return !shards_.empty(); }

  int capture(caf::event_based_actor* self, const msg::ckpt_capture& cap) override {
    for (auto& s : shards_) self->send(s, cap);
    return static_cast<int>(shards_.size());
  }

  std::string end(caf::event_based_actor* self, job_status) override {
    for (auto& s : shards_) self->send_exit(s, caf::exit_reason::user_shutdown);
    shards_.clear();
    return {};
  }

  void fill_report(job_report& r, std::int64_t steps) const override {
    fill_sync_report(r, cfg_, nullptr, steps);
  }

 private:
  config::job_config cfg_;
  msg::job_id job_ = 0;
  std::vector<caf::actor> shards_;
};

}  // namespace

std::unique_ptr<job_sync> make_ps_sync(const config::job_config& cfg, msg::job_id job) {
  return std::make_unique<ps_sync>(cfg, job);
}

}  // namespace troupe::actors
