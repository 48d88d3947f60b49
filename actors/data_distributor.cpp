#include "actors/data_distributor.hpp"

#include <exception>

#include "core/error.hpp"
#include "data/split.hpp"

namespace troupe::actors {

caf::behavior data_distributor(stateful<distributor_state>* self, msg::job_id job,
                               msg::epoch_id epoch, config::job_config cfg) {
  self->state.gate = epoch_gate{job, epoch};
  self->state.cfg = std::move(cfg);
  return {
      // Edges 1 and 4.
      [=](msg::data_atom) -> caf::result<msg::local_ref<data_bundle>> {
        auto& st = self->state;
        try {
          st.data = load_job_data(st.cfg.data, st.cfg.seed);
        } catch (const input_error& e) {
          return input_failure(std::string("job '") + st.cfg.name + "': " + e.what());
        } catch (const std::exception& e) {
          return runtime_failure(std::string("job '") + st.cfg.name + "': " + e.what());
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
        plan.epoch = req.epoch;
        plan.step = req.step;
        plan.data_epoch = st.sampler->pass_of(req.step);
        auto indices = std::make_shared<const msg::index_list>(
            st.priority ? st.priority->draw(req.step)
                        : msg::index_list(st.sampler->batch(req.step)));
        // The last step of a pass is shorter than the batch: split what it has.
        plan.counts =
            data::split_weighted(static_cast<std::int64_t>(indices->size()), st.weights, true);
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
