#include "actors/common/report.hpp"

#include <cstdio>

namespace troupe {

namespace {

// Time keys end in `_s` and hold seconds. The names of earlier versions (milliseconds,
// microseconds, `_seconds`, a bare `t`) are written beside them for one version more, marked
// deprecated in docs/REPORT.md, so that a reader of the old names has a version to move.
// One table, applied to the finished JSON, so the two names can never disagree.
struct renamed_time_key {
  const char* old_name;
  const char* name;
  double to_seconds;
};
constexpr renamed_time_key renamed_time_keys[] = {
    {"t", "t_s", 1.0},
    {"wall_seconds", "wall_s", 1.0},
    {"compute_seconds", "compute_s", 1.0},
    {"ms", "duration_s", 1e-3},
    {"detect_ms", "detect_s", 1e-3},
    {"recovery_ms", "recovery_s", 1e-3},
    {"hold_ms", "hold_s", 1e-3},
    {"median_ms", "median_s", 1e-3},
    {"write_ms_max", "write_max_s", 1e-3},
    {"write_ms_mean", "write_mean_s", 1e-3},
};

nlohmann::json scaled(const nlohmann::json& v, double factor) {
  if (v.is_number()) return v.get<double>() * factor;
  if (!v.is_array()) return v;  // null (a value not measured) stays null
  nlohmann::json out = nlohmann::json::array();
  for (const auto& x : v) out.push_back(scaled(x, factor));
  return out;
}

// Adds the `_s` name beside every deprecated time key in `j` and below.
void add_seconds_keys(nlohmann::json& j) {
  if (j.is_array()) {
    for (auto& x : j) add_seconds_keys(x);
    return;
  }
  if (!j.is_object()) return;
  std::vector<std::pair<std::string, nlohmann::json>> added;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const auto& key = it.key();
    for (const auto& k : renamed_time_keys)
      if (key == k.old_name && !j.contains(k.name))
        added.emplace_back(k.name, scaled(it.value(), k.to_seconds));
    // step_phases: PHASE_us -> PHASE_s.
    if (key.size() > 3 && key.compare(key.size() - 3, 3, "_us") == 0) {
      const auto name = key.substr(0, key.size() - 3) + "_s";
      if (!j.contains(name)) added.emplace_back(name, scaled(it.value(), 1e-6));
    }
  }
  for (auto& [name, value] : added) j[name] = std::move(value);
  for (auto& [key, value] : j.items()) add_seconds_keys(value);
}

nlohmann::json with_seconds_keys(nlohmann::json j) {
  add_seconds_keys(j);
  return j;
}

}  // namespace

std::string hex64(std::uint64_t x) {
  char buf[19];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(x));
  return buf;
}

namespace {

// The builders below make the JSON without the `_s` twins; each public to_json adds them once
// over the whole tree it returns (a job's series and events are inside the job's).
nlohmann::json series_json(const job_series& series) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : series.points)
    points.push_back({{"t", p.t},
                      {"step", p.step},
                      {"loss", p.loss},
                      {"samples_per_second", p.samples_per_second},
                      {"split", p.split},
                      {"busy", p.busy},
                      {"sync_period", p.sync_period},
                      {"share", p.share}});
  return {{"groups", series.groups},
          {"workers", series.workers},
          {"every", series.every},
          {"points", points}};
}

nlohmann::json events_json(const std::vector<job_event>& events) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : events) {
    nlohmann::json ev = {{"t", e.t}, {"step", e.step}, {"kind", e.kind}, {"detail", e.detail}};
    if (e.ms) ev["ms"] = *e.ms;
    out.push_back(std::move(ev));
  }
  return out;
}

nlohmann::json job_json(const job_report& j) {
  nlohmann::json workers = nlohmann::json::array();
  for (const auto& w : j.workers) {
    workers.push_back({{"name", w.name},
                       {"group", w.group},
                       {"device", w.device},
                       {"samples", w.samples},
                       {"first_step", w.first_step},
                       {"wire_bytes", w.wire_bytes},
                       {"mean_batch", w.mean_batch},
                       {"samples_per_second", w.samples_per_second},
                       {"compute_seconds", w.compute_seconds},
                       {"busy_fraction", w.busy_fraction}});
  }
  nlohmann::json history = nlohmann::json::array();
  for (const auto& c : j.sync.period_history)
    history.push_back({{"step", c.step}, {"period", c.period}});
  nlohmann::json out = {
      {"name", j.name},
      {"status", name_of(j.status)},
      {"epochs", j.epochs},
      {"steps", j.steps},
      {"global_batch", j.global_batch},
      {"started_s", j.started_s},
      {"finished_s", j.finished_s},
      {"wall_seconds", j.wall_seconds},
      {"samples_per_second", j.samples_per_second},
      {"wire_bytes_per_step", j.wire_bytes_per_step},
      {"train_loss", j.train_loss},
      {"test_loss", j.test_loss},
      {"test_accuracy", j.test_accuracy},
      // A job that did not end at a step boundary (failed) has no consistent parameters: null,
      // not zeros that read like a model.
      {"params", j.params.count > 0 ? nlohmann::json{{"count", j.params.count},
                                                     {"l2", j.params.l2},
                                                     {"fnv1a64", hex64(j.params.fnv1a64)}}
                                    : nlohmann::json(nullptr)},
      {"workers", workers},
      {"faults",
       {{"injected", j.faults.injected},
        {"failures", j.faults.failures},
        {"failures_by_class", j.faults.failures_by_class},
        {"restarts", j.faults.restarts},
        {"migrations", j.faults.migrations},
        {"lost_steps", j.faults.lost_steps},
        {"recomputed_steps", j.faults.recomputed_steps},
        {"recovery_ms", j.faults.recovery_ms},
        {"detect_ms", j.faults.detect_ms}}},
      {"sync",
       {{"mode", name_of(j.sync.mode)},
        {"period", j.sync.period},
        {"rounds", j.sync.rounds},
        {"period_history", history}}},
      {"checkpoints",
       {{"written", j.checkpoints.written},
        {"failed", j.checkpoints.failed},
        {"last_step", j.checkpoints.last_step},
        {"resumed_from_step", j.checkpoints.resumed_from_step
                                  ? nlohmann::json(*j.checkpoints.resumed_from_step)
                                  : nlohmann::json(nullptr)},
        {"write_ms_mean", j.checkpoints.write_ms_mean},
        {"write_ms_max", j.checkpoints.write_ms_max},
        {"hold_ms", j.checkpoints.hold_ms}}},
      {"sample_audit", j.samples
                           ? nlohmann::json{{"passes_checked", j.samples->passes_checked},
                                            {"counted_twice", j.samples->counted_twice},
                                            {"never_counted", j.samples->never_counted},
                                            {"recorded", j.samples->recorded},
                                            {"earlier",
                                             {{"passes_checked", j.samples->earlier_passes_checked},
                                              {"counted_twice", j.samples->earlier_counted_twice},
                                              {"never_counted", j.samples->earlier_never_counted}}}}
                           : nlohmann::json(nullptr)},
      {"rebalances", j.rebalances},
      {"imbalance_index", j.imbalance_index},
      {"noise_scale", j.noise_scale ? nlohmann::json(*j.noise_scale) : nlohmann::json(nullptr)},
  };
  if (!j.step_phases_us.empty()) {
    nlohmann::json phases = {{"steps", j.step_phases_steps}};
    for (const auto& [name, us] : j.step_phases_us) phases[name + "_us"] = us;
    out["step_phases"] = phases;
  }
  out["series"] = series_json(j.series);
  out["events"] = events_json(j.events);
  if (j.sync.process_ring) {
    const auto& g = *j.sync.process_ring;
    out["sync"]["process_ring"] = {{"ranks", g.ranks},           {"transport", g.transport},
                                   {"codec", g.codec},           {"bytes", g.bytes},
                                   {"wire_bytes", g.wire_bytes}, {"reductions", g.reductions},
                                   {"median_ms", g.median_ms},   {"busbw_GBps", g.busbw_GBps}};
  }
  if (j.leave_out_trial) {
    const auto& l = *j.leave_out_trial;
    out["leave_out"] = {{"workers", l.workers},
                        {"left_out", l.left_out},
                        {"share", l.share},
                        {"with_samples_per_second", l.with_sps},
                        {"without_samples_per_second", l.without_sps},
                        {"reason", l.reason}};
  }
  if (!j.checkpoints.resumed_members.empty())
    out["checkpoints"]["resumed_members"] = j.checkpoints.resumed_members;
  if (!j.error.empty()) out["error"] = j.error;
  if (j.share) {
    out["share"] = *j.share;
    out["share_changes"] = j.share_changes;
  }
  return out;
}

}  // namespace

nlohmann::json to_json(const job_series& series) {
  return with_seconds_keys(series_json(series));
}

nlohmann::json to_json(const std::vector<job_event>& events) {
  return with_seconds_keys(events_json(events));
}

nlohmann::json to_json(const job_report& j) {
  return with_seconds_keys(job_json(j));
}

nlohmann::json to_json(const run_report& r) {
  nlohmann::json jobs = nlohmann::json::array();
  for (const auto& j : r.jobs) jobs.push_back(job_json(j));
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& g : r.cluster.groups) {
    nlohmann::json one = {{"name", g.name},
                          {"device", g.device},
                          {"count", g.count},
                          {"threads", g.threads},
                          {"slowdown", g.slowdown}};
    if (g.weight > 0) one["weight"] = g.weight;
    if (g.row_seconds > 0) one["row_seconds"] = g.row_seconds;
    groups.push_back(one);
  }
  nlohmann::json agents = nlohmann::json::array();
  for (const auto& a : r.agents) {
    nlohmann::json one = {{"name", a.name},   {"group", a.group},     {"device", a.device},
                          {"count", a.count}, {"threads", a.threads}, {"host", a.host},
                          {"pid", a.pid},     {"member", a.member},   {"joined_s", a.joined_s}};
    if (a.lost_s) {
      one["lost_s"] = *a.lost_s;
      one["lost_reason"] = a.lost_reason;
    }
    agents.push_back(one);
  }
  nlohmann::json schedule = nlohmann::json::array();
  for (const auto& e : r.cluster.schedule)
    schedule.push_back({{"at_s", e.at_s}, {"job", e.job}, {"event", e.what}, {"groups", e.groups}});
  return with_seconds_keys(
      {{"troupe_version", r.troupe_version},
       {"created_at", r.created_at},
       {"config", {{"source", r.config_source}, {"sets", r.config_sets}, {"yaml", r.config_yaml}}},
       {"jobs", jobs},
       {"cluster",
        {{"groups", groups},
         {"devices", r.cluster.devices},
         {"wall_seconds", r.cluster.wall_seconds},
         {"schedule", schedule}}},
       {"agents", agents},
       {"peak_rss_bytes", r.peak_rss_bytes}});
}

int exit_code(const run_report& r) {
  int rc = 0;
  for (const auto& j : r.jobs) {
    if (j.status == job_status::completed) continue;
    if (j.status == job_status::failed && j.bad_input) return 2;
    if (j.status == job_status::failed) rc = 1;
  }
  return rc;
}

}  // namespace troupe
