#include "actors/sync/parameter_server.hpp"

#include <algorithm>

#include "actors/checkpoint/checkpoint_state.hpp"
#include "actors/sync/block_sums.hpp"
#include "collectives/inproc/reduce_kernel.hpp"
#include "core/clock.hpp"

namespace troupe::actors {

std::vector<std::pair<std::size_t, std::size_t>> shard_slices(std::size_t n, int shards) {
  const std::size_t k = std::max<std::size_t>(1, std::min<std::size_t>(n, std::max(1, shards)));
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::size_t offset = 0;
  for (std::size_t i = 0; i < k; ++i) {
    const std::size_t count = n / k + (i < n % k ? 1 : 0);
    out.emplace_back(offset, count);
    offset += count;
  }
  return out;
}

caf::behavior parameter_server(stateful<shard_state>* self, shard_spec spec) {
  self->state.gate = generation_gate{spec.job, spec.generation};
  keep_exception_text(self);
  self->state.mean.assign(spec.count, 0.0f);
  self->state.version = spec.version;
  self->state.spec = std::move(spec);
  return {
      // Edges 1-3.
      [=](const msg::reduce_cmd& cmd, const msg::local_ref<msg::grad_set>& grads) {
        auto& st = self->state;
        if (!st.gate.admit(cmd)) return;
        if (cmd.step != st.version || !grads || grads->size() != cmd.ranks.size() ||
            cmd.total_samples <= 0) {
          ++st.out_of_order;
          return;
        }
        const std::size_t lo = st.spec.offset;
        const std::size_t n = st.spec.count;
        float* mean = st.mean.data();
        // Sum in the command's rank order, then divide: the mean gradient of the global batch.
        // The division is fused into the last pass; the float operations (and so the bits) are
        // those of "sum in rank order, then divide".
        stopwatch sum_clock;
        const float total = static_cast<float>(cmd.total_samples);
        const std::size_t ranks = grads->size();
        // One pass over every slice's sums (collectives/inproc/reduce_kernel.hpp): the bits of
        // the scalar loop, 8 lanes wide where the CPU has AVX2. A slice of the canonical
        // reduction holds one sum per block, one after the other: they are added in block
        // order, so the bits are the same however the blocks were shared out.
        const std::size_t params = st.spec.params->values.size();
        st.ins.clear();
        for (std::size_t r = 0; r < ranks; ++r) {
          if (!append_block_sums(*(*grads)[r], params, st.ins)) {
            ++st.out_of_order;
            return;
          }
        }
        collectives::reduce_spec spec;
        spec.divide = true;
        spec.divisor = total;
        collectives::reduce_into(mean, st.ins.data(), st.ins.size(), lo, n, spec);
        const double grad_sq = collectives::sq_norm(mean, n);
        const double sum_s = sum_clock.seconds();
        stopwatch apply_clock;
        st.spec.optimizer->step(st.spec.params->values.data() + lo, mean);
        ++st.version;
        self->send(st.spec.job_actor,
                   msg::applied{cmd.job, cmd.generation, cmd.step, st.spec.shard, st.version,
                                grad_sq, sum_s, apply_clock.seconds()});
      },
      // Edge 4.
      [=](msg::start_atom, msg::generation_id generation) {
        self->state.gate.advance_to(generation);
      },
      // Edge 6. Only the shard writes its slice and optimizer, so the copy is taken here, on
      // the shard's turn, while the workers already compute the next step.
      [=](const msg::ckpt_capture& c) {
        auto& st = self->state;
        auto part = std::make_shared<ckpt_shard_part>();
        part->offset = st.spec.offset;
        const float* p = st.spec.params->values.data() + st.spec.offset;
        part->params.assign(p, p + st.spec.count);
        part->optimizer = st.spec.optimizer->state();
        self->send(caf::actor_cast<caf::actor>(self->current_sender()),
                   msg::ckpt_part{c.job, c.generation, c.step, st.spec.shard, st.version},
                   msg::local_ref<ckpt_shard_part>{std::move(part)});
      },
      // Edge 5.
      [=](msg::query_atom) {
        return caf::make_message(self->state.version,
                                 self->state.gate.dropped() + self->state.out_of_order);
      },
  };
}

}  // namespace troupe::actors
