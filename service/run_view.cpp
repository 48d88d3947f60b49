#include "service/run_view.hpp"

namespace troupe::service {
namespace {

bool ended(const std::string& status) {
  return status != "queued" && status != "running";
}

}  // namespace

run_view::run_view(runtime& rt, std::string log_dir) : rt_(rt), log_dir_(std::move(log_dir)) {
  rt_.on_metrics([this](const live_metrics& m) { live_.on_step(m); });
  rt_.on_event([this](const std::string& job, const job_event& e) { live_.on_event(job, e); });
  rt_.on_job_end([this](const job_report& r) {
    live_.on_end(r);
    std::lock_guard<std::mutex> lock(mu_);
    reports_[r.name] = to_json(r);
  });
}

nlohmann::json run_view::submit(const std::string&, const std::string&,
                                const std::vector<std::string>&) {
  throw input_error("troupe run takes its jobs from its config; submit jobs to troupe serve");
}

nlohmann::json run_view::jobs() const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& v : rt_.jobs()) {
    nlohmann::json j = {{"id", v.name},
                        {"name", v.name},
                        {"state", v.status},
                        {"priority", v.priority},
                        {"reason", v.reason}};
    if (v.position >= 0) j["position"] = v.position;
    live_.describe(v.name, j);
    std::lock_guard<std::mutex> lock(mu_);
    const auto r = reports_.find(v.name);
    if (r != reports_.end()) {
      j["step"] = r->second.value("steps", 0);
      j["lost_steps"] = r->second["faults"].value("lost_steps", 0);
    }
    out.push_back(std::move(j));
  }
  return {{"jobs", out}};
}

nlohmann::json run_view::entry(const std::string& id) const {
  // Kept by name: a range-for over a member of the temporary would read it after its end.
  const auto all = jobs();
  for (const auto& j : all["jobs"])
    if (j["id"] == id) return j;
  throw not_found("no job '" + id + "' in this run");
}

nlohmann::json run_view::job(const std::string& id) const {
  auto j = entry(id);
  std::lock_guard<std::mutex> lock(mu_);
  const auto r = reports_.find(id);
  if (r != reports_.end()) j["report"] = r->second;
  return j;
}

nlohmann::json run_view::series(const std::string& id) const {
  if (auto live = live_.series(id)) return *live;
  entry(id);  // not_found for a job the run does not have
  std::lock_guard<std::mutex> lock(mu_);
  const auto r = reports_.find(id);
  if (r == reports_.end()) return {{"series", nullptr}, {"events", nlohmann::json::array()}};
  return {{"series", r->second["series"]}, {"events", r->second["events"]}};
}

nlohmann::json run_view::logs(const std::string& id, std::uint64_t offset,
                              std::size_t max_bytes) const {
  const auto j = entry(id);
  return read_log(log_dir_, id, offset, max_bytes, ended(j.value("state", "")));
}

nlohmann::json run_view::agents() const {
  return agents_json(rt_.agents());
}

std::string run_view::metrics() const {
  std::map<std::string, int> by_state = {{"queued", 0}, {"running", 0},   {"completed", 0},
                                         {"failed", 0}, {"cancelled", 0}, {"interrupted", 0}};
  for (const auto& v : rt_.jobs()) ++by_state[v.status];
  std::map<std::string, int> by_health = {{"joined", 0}, {"lost", 0}};
  for (const auto& a : rt_.agents()) ++by_health[a.lost_s ? "lost" : "joined"];
  return live_.metrics(by_state, by_health);
}

void run_view::cancel(const std::string& id) {
  entry(id);
  rt_.cancel(id);
}

void run_view::inject(const std::string& id, const std::string& spec) {
  entry(id);
  rt_.inject(id, spec);
}

void run_view::drain_agent(const std::string& name) {
  try {
    rt_.drain_agent(name);
  } catch (const input_error& e) {
    throw not_found(e.what());
  }
}

}  // namespace troupe::service
