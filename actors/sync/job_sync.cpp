#include "actors/sync/job_sync.hpp"

namespace troupe::actors {

std::unique_ptr<job_sync> make_job_sync(const config::job_config& cfg, msg::job_id job,
                                        double deadline_seconds, bool replicas_here,
                                        std::int64_t reduction_block) {
  switch (cfg.sync.mode) {
    case sync_mode::allreduce:
      return make_allreduce_sync(cfg, deadline_seconds, replicas_here, reduction_block);
    case sync_mode::local:
      return make_local_sync(cfg, deadline_seconds);
    case sync_mode::ps:
      break;
  }
  return make_ps_sync(cfg, job);
}

}  // namespace troupe::actors
