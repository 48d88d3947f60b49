#include "actors/checkpoint/checkpoint_writer.hpp"

#include <exception>
#include <filesystem>

#include "actors/checkpoint/checkpoint_state.hpp"
#include "core/checkpoint.hpp"
#include "core/clock.hpp"

namespace troupe::actors {

caf::behavior checkpoint_writer(stateful<checkpoint_writer_state>* self, std::string dir,
                                std::size_t keep) {
  auto store = std::make_shared<checkpoint_store>(std::move(dir), keep);
  return {
      [=](const msg::ckpt_write& w, const msg::local_ref<job_snapshot>& snap) {
        msg::ckpt_written out{w.job, w.generation, w.step, {}, 0, 0.0, 0.0, {}};
        try {
          const auto t0 = steady::now();
          const checkpoint c = to_checkpoint(*snap);
          out.encode_seconds = seconds_since(t0);
          const auto t1 = steady::now();
          out.path = store->write(c);
          out.write_seconds = seconds_since(t1);
          std::error_code ec;
          out.bytes = static_cast<std::int64_t>(std::filesystem::file_size(out.path, ec));
        } catch (const std::exception& e) {
          out.error = e.what();
        }
        self->send(caf::actor_cast<caf::actor>(self->current_sender()), std::move(out));
      },
  };
}

}  // namespace troupe::actors
