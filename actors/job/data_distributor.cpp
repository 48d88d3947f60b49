#include "actors/job/data_distributor.hpp"

#include <exception>

#include "core/error.hpp"
#include "data/split.hpp"

namespace troupe::actors {
namespace {

// `data.mode: sharded`: the shards are cut by the weights of the first plan; a rank whose weight
// later drops to 0 (its worker was migrated away) hands its slice to the nearest live rank
// above it, else below it (adjacent slices, so the index list stays one block per rank).
shard_step sharded_step(distributor_state& st, std::int64_t step) {
  if (!st.shards)
    st.shards.emplace(st.data.train->n, st.cfg.batch, st.weights, st.cfg.seed,
                      st.cfg.data.neighbour_exchange);
  auto s = st.shards->plan(step);
  if (st.weights.size() != s.counts.size()) return s;
  const auto ranks = s.counts.size();
  for (std::size_t r = 0; r < ranks; ++r) {
    if (st.weights[r] > 0 || s.counts[r] == 0) continue;
    std::size_t to = ranks;
    for (std::size_t k = r + 1; k < ranks && to == ranks; ++k)
      if (st.weights[k] > 0) to = k;
    for (std::size_t k = r; k-- > 0 && to == ranks;)
      if (st.weights[k] > 0) to = k;
    if (to == ranks) break;  // no live rank: leave the plan as it is
    s.counts[to] += s.counts[r];
    s.counts[r] = 0;
  }
  return s;
}

}  // namespace

caf::behavior data_distributor(stateful<distributor_state>* self, msg::job_id job,
                               msg::generation_id generation, config::job_config cfg,
                               std::int64_t block) {
  self->state.gate = generation_gate{job, generation};
  keep_exception_text(self);
  self->state.cfg = std::move(cfg);
  self->state.block = block;
  return {
      // Edges 1 and 4.
      [=](msg::data_atom) -> caf::result<msg::local_ref<data_bundle>> {
        auto& st = self->state;
        try {
          st.data = load_job_data(st.cfg.data, st.cfg.seed);
        } catch (const input_error& e) {
          return input_failure(std::string("job '") + st.cfg.name + "': " + e.what());
        } catch (const std::exception& e) {
          return crash_failure(std::string("job '") + st.cfg.name + "': " + e.what());
        }
        st.sampler.emplace(st.data.train->n, st.cfg.batch, st.cfg.seed);
        if (st.cfg.data.priority)
          st.priority.emplace(st.data.train->n, st.cfg.batch, *st.cfg.data.priority, st.cfg.seed);
        return msg::local_ref<data_bundle>{std::make_shared<const data_bundle>(st.data)};
      },
      // Edge 2.
      [=](const msg::split_update& u) {
        if (!self->state.gate.follow(u)) return;
        self->state.weights = u.weights;
      },
      // Edge 3.
      [=](const msg::plan_request& req) {
        auto& st = self->state;
        if (!st.gate.follow(req) || !st.sampler || st.weights.empty()) return;
        msg::step_plan plan;
        plan.job = req.job;
        plan.generation = req.generation;
        plan.step = req.step;
        plan.data_epoch = st.sampler->pass_of(req.step);
        std::shared_ptr<const msg::index_list> indices;
        if (st.cfg.data.mode == data_mode::sharded) {
          try {
            auto s = sharded_step(st, req.step);
            indices = std::make_shared<const msg::index_list>(std::move(s.indices));
            plan.counts = std::move(s.counts);
          } catch (const std::exception& e) {
            // Only bad weights or q can throw; the config checks make that unreachable.
            self->quit(crash_failure(std::string("job '") + st.cfg.name + "': " + e.what()));
            return;
          }
        } else {
          indices = std::make_shared<const msg::index_list>(
              st.priority ? st.priority->draw(req.step)
                          : msg::index_list(st.sampler->batch(req.step)));
          // The last step of a pass is shorter than the batch: split what it has. With the
          // canonical reduction, in whole blocks.
          plan.counts = data::split_blocks(static_cast<std::int64_t>(indices->size()), st.block,
                                           st.weights, true);
        }
        self->send(caf::actor_cast<caf::actor>(self->current_sender()), std::move(plan),
                   msg::local_ref<msg::index_list>{std::move(indices)});
      },
      // Edge 5.
      [=](const msg::sample_losses& m, const msg::local_ref<msg::sample_loss_list>& l) {
        auto& st = self->state;
        if (!st.gate.admit(m) || !st.priority || !l) return;
        st.priority->observe(m.step, l->indices, l->losses);
      },
  };
}

}  // namespace troupe::actors
