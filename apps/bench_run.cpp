#include "apps/bench_run.hpp"

#include <algorithm>
#include <memory>
#include <mutex>

#include "core/config_load.hpp"
#include "core/error.hpp"

namespace troupe::apps {

job_run run_one_job(const std::string& yaml, const std::string& source, runtime_options options,
                    const std::string& bench) {
  runtime rt(config::parse_config(yaml, source), std::move(options));
  auto out = std::make_shared<std::vector<live_metrics>>();
  auto mu = std::make_shared<std::mutex>();
  rt.on_metrics([out, mu](const live_metrics& m) {
    std::lock_guard<std::mutex> lock(*mu);
    out->push_back(m);
  });
  auto report = rt.run();
  if (report.jobs.size() != 1 || report.jobs[0].status != job_status::completed)
    throw runtime_failure(bench + ": job did not complete: " +
                          (report.jobs.empty() ? std::string("no job") : report.jobs[0].error));
  std::lock_guard<std::mutex> lock(*mu);
  std::sort(out->begin(), out->end(),
            [](const live_metrics& a, const live_metrics& b) { return a.step < b.step; });
  return {report.jobs[0], *out};
}

}  // namespace troupe::apps
