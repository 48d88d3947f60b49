#include "actors/device_worker.hpp"

#include <algorithm>
#include <cstring>
#include <exception>

#include "core/clock.hpp"
#include "core/error.hpp"

namespace troupe::actors {
namespace {

// Copies rows idx[0..count) of `d` into contiguous buffers and returns the batch over them.
models::batch gather(worker_state& st, const data::dataset& d, const std::int64_t* idx,
                     std::size_t count) {
  const std::size_t f = d.features();
  st.x.resize(count * f);
  for (std::size_t i = 0; i < count; ++i)
    std::memcpy(st.x.data() + i * f, d.row(static_cast<std::size_t>(idx[i])), f * sizeof(float));
  models::batch b;
  b.x = st.x.data();
  b.size = count;
  if (!d.labels.empty()) {
    st.labels.resize(count);
    for (std::size_t i = 0; i < count; ++i)
      st.labels[i] = d.labels[static_cast<std::size_t>(idx[i])];
    b.labels = st.labels.data();
  }
  if (!d.targets.empty()) {
    st.targets.resize(count);
    for (std::size_t i = 0; i < count; ++i)
      st.targets[i] = d.targets[static_cast<std::size_t>(idx[i])];
    b.targets = st.targets.data();
  }
  return b;
}

// A contiguous range of rows needs no index list: the batch points into the dataset itself.
models::batch view(const data::dataset& d, std::size_t offset, std::size_t count) {
  models::batch b;
  b.x = d.row(offset);
  b.size = count;
  if (!d.labels.empty()) b.labels = d.labels.data() + offset;
  if (!d.targets.empty()) b.targets = d.targets.data() + offset;
  return b;
}

}  // namespace

caf::behavior device_worker(stateful<worker_state>* self, caf::actor job, msg::spawn_worker spec,
                            msg::local_ref<worker_setup> setup) {
  auto& st = self->state;
  st.gate = epoch_gate{spec.job, spec.epoch};
  st.rank = spec.rank;
  st.setup = setup;
  // Edge 1 / 3.
  try {
    st.device = devices::make_device(setup->device);
    st.model = setup->prototype->clone();
    st.grad = std::make_shared<std::vector<float>>(st.model->param_count(), 0.0f);
  } catch (const std::exception& e) {
    self->quit(input_failure(setup->device.name + ": " + e.what()));
    return {};
  }
  self->send(job, msg::worker_ready{spec.job, spec.epoch, spec.rank, st.device->capability()});
  return {
      // Edge 2: one step's slice.
      [=](const msg::compute_cmd& cmd, const msg::local_ref<msg::index_list>& indices) {
        auto& st = self->state;
        if (!st.gate.admit(cmd)) return;
        const auto& store = *st.setup->params;
        if (store.version.load() != cmd.version) {
          self->quit(runtime_failure("parameter version " + std::to_string(store.version.load()) +
                                     " where step " + std::to_string(cmd.step) + " needs " +
                                     std::to_string(cmd.version)));
          return;
        }
        stopwatch sw;
        const auto& train = *st.setup->data.train;
        auto b =
            gather(st, train, indices->data() + cmd.offset, static_cast<std::size_t>(cmd.count));
        const double gather_s = sw.seconds();
        devices::step_timing timing;
        auto stats =
            st.device->run_step(*st.model, store.values.data(), b, st.grad->data(), &timing);
        double sq = 0.0;
        for (float g : *st.grad) sq += static_cast<double>(g) * g;
        msg::step_done done{cmd.job,
                            cmd.epoch,
                            cmd.step,
                            st.rank,
                            static_cast<std::int64_t>(stats.samples),
                            stats.loss_sum,
                            static_cast<std::int64_t>(stats.correct),
                            sq,
                            timing.compute_seconds,
                            timing.gate_wait_seconds,
                            gather_s};
        self->send(job, done, msg::local_ref<msg::grad_buffer>{st.grad});
      },
      [=](const msg::eval_cmd& cmd) {
        auto& st = self->state;
        if (!st.gate.admit(cmd)) return;
        const auto& test = *st.setup->data.test;
        const auto* params = st.setup->params->values.data();
        models::step_stats total;
        constexpr std::int64_t chunk = 1024;  // bounds the activation scratch
        for (std::int64_t at = cmd.offset; at < cmd.offset + cmd.count; at += chunk) {
          const std::int64_t n = std::min(chunk, cmd.offset + cmd.count - at);
          auto b = view(test, static_cast<std::size_t>(at), static_cast<std::size_t>(n));
          total += st.device->run_eval(*st.model, params, b);
        }
        self->send(job, msg::eval_done{cmd.job, cmd.epoch, st.rank,
                                       static_cast<std::int64_t>(total.samples), total.loss_sum,
                                       static_cast<std::int64_t>(total.correct)});
      },
      [=](const msg::probe_cmd& cmd) {
        auto& st = self->state;
        if (!st.gate.admit(cmd)) return;
        const auto& train = *st.setup->data.train;
        const auto n = static_cast<std::size_t>(
            std::max<std::int64_t>(1, std::min<std::int64_t>(cmd.batch, train.n)));
        auto b = view(train, 0, n);
        std::vector<float> scratch(st.model->param_count());
        const auto* params = st.setup->params->values.data();
        st.device->run_step(*st.model, params, b, scratch.data());  // warm-up, not timed
        stopwatch sw;
        const int steps = std::max(1, cmd.steps);
        for (int i = 0; i < steps; ++i) st.device->run_step(*st.model, params, b, scratch.data());
        self->send(job, msg::probe_done{cmd.job, cmd.epoch, st.rank,
                                        sw.seconds() / static_cast<double>(steps * n)});
      },
  };
}

}  // namespace troupe::actors
