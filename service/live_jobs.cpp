#include "service/live_jobs.hpp"

namespace troupe::service {

void live_jobs::on_step(const live_metrics& m) {
  metrics_.on_step(m);
  std::lock_guard<std::mutex> lock(mu_);
  last_[m.job] = m;
  series_[m.job].step(m);
}

void live_jobs::on_event(const std::string& job, const job_event& e) {
  std::lock_guard<std::mutex> lock(mu_);
  series_[job].event(e);
}

void live_jobs::on_end(const job_report& r) {
  metrics_.on_end(r);
  forget(r.name);
}

void live_jobs::forget(const std::string& job) {
  std::lock_guard<std::mutex> lock(mu_);
  last_.erase(job);
  series_.erase(job);
}

void live_jobs::describe(const std::string& job, nlohmann::json& j) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto m = last_.find(job);
  if (m == last_.end()) return;
  j["step"] = m->second.step;
  j["steps_total"] = m->second.steps_total;
  j["loss"] = m->second.loss;
  j["samples_per_second"] = m->second.samples_per_second;
}

std::optional<nlohmann::json> live_jobs::series(const std::string& job) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto s = series_.find(job);
  if (s == series_.end()) return std::nullopt;
  return nlohmann::json{{"series", to_json(s->second.series())},
                        {"events", to_json(s->second.events())}};
}

}  // namespace troupe::service
