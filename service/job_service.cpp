#include "service/job_service.hpp"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/config_load.hpp"
#include "core/file_text.hpp"
#include "core/job_rules.hpp"
#include "core/secret.hpp"
#include "service/live_jobs.hpp"

namespace troupe::service {

namespace {

// A job's data (Fashion-MNIST is about 220 MB as floats) is loaded and freed on whichever
// threads ran its actors, and glibc keeps what is freed in its arenas for reuse: serve grew to
// about 950 MB after 20 small Fashion-MNIST jobs and stayed there. Free pages are handed back
// when a job ends, and before one is submitted (what the last one freed since); with serve's
// two arenas (apps/cmd_serve.cpp) that keeps it near 100 MB.
void return_free_memory() {
  ::malloc_trim(0);
}

}  // namespace
namespace fs = std::filesystem;

namespace {

// Written to a temporary file, then renamed: a crash leaves the old file or the new one.
void write_file(const std::string& path, const std::string& text) {
  const auto tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) throw runtime_failure(tmp + ": cannot write it");
  }
  fs::rename(tmp, path);
}

// The states the database keeps for what the runtime reports.
bool has_ended(const std::string& state) {
  return state == "completed" || state == "failed" || state == "cancelled" ||
         state == "interrupted";
}

}  // namespace

struct job_service::state {
  service_options opts;
  std::string checkpoint_root;
  std::string log_dir;
  config::cluster_config cluster;
  std::unique_ptr<job_store> store;
  std::unique_ptr<runtime> rt;
  mutable std::mutex mu;  // guards what follows
  bool stopping = false;
  live_jobs live;  // running jobs' last steps, series, and /metrics
  static constexpr int max_start_retries = 3;

  void log(const std::string& line) const {
    if (opts.log) opts.log(line);
  }

  // The runnable job of a stored submission: its entry of the file, named by its id, with
  // `after:` resolved to ids (see the header). Parsed again from the stored text, so a restart
  // rebuilds exactly what was submitted.
  config::job_config materialize(const stored_job& sj, const std::vector<stored_job>& all) const {
    std::vector<std::string> known;
    for (const auto& j : all) {
      known.push_back(j.name);
      known.push_back(j.id);
    }
    auto rc = config::parse_jobs(sj.yaml, sj.source, sj.sets, cluster, known, checkpoint_root);
    if (sj.index < 0 || static_cast<std::size_t>(sj.index) >= rc.jobs.size())
      throw input_error(sj.source + ": has no jobs[" + std::to_string(sj.index) + "]");
    auto job = rc.jobs[static_cast<std::size_t>(sj.index)];
    const auto first_seq = sj.seq - sj.index;  // one submission's jobs have consecutive seqs
    for (auto& dep : job.after) {
      const auto sibling = std::find_if(rc.jobs.begin(), rc.jobs.end(),
                                        [&](const config::job_config& j) { return j.name == dep; });
      if (sibling != rc.jobs.end()) {
        dep += "-" + std::to_string(first_seq + (sibling - rc.jobs.begin()));
        continue;
      }
      const stored_job* newest = nullptr;
      for (const auto& j : all)
        if (j.seq < sj.seq && (j.name == dep || j.id == dep)) newest = &j;
      if (newest) dep = newest->id;
    }
    // A dependency the store holds as completed is met now. The runtime knows only the jobs of
    // this service's life: after a restart it would wait for one that completed before it.
    job.after.erase(std::remove_if(job.after.begin(), job.after.end(),
                                   [&](const std::string& dep) {
                                     const auto* j = find(all, dep);
                                     return j && j->state == "completed";
                                   }),
                    job.after.end());
    job.name = sj.id;
    return job;
  }

  static const stored_job* find(const std::vector<stored_job>& all, const std::string& id) {
    for (const auto& j : all)
      if (j.id == id) return &j;
    return nullptr;
  }

  // The materialized job of `sj` goes to the runtime, unless a dependency ended without
  // completing (the store says so; the runtime may not know it after a restart): then it is
  // cancelled, as the runtime would cancel it.
  void submit_stored(const stored_job& sj, config::job_config job,
                     const std::vector<stored_job>& all) {
    for (const auto& dep : job.after) {
      const auto* j = find(all, dep);
      if (j && has_ended(j->state)) {
        store->finish(sj.id, "cancelled", "",
                      "job '" + dep + "' it depends on did not complete (" + j->state + ")");
        return;
      }
    }
    rt->submit(std::move(job));
  }

  void on_end(const job_report& r) {
    return_free_memory();
    std::lock_guard<std::mutex> lock(mu);
    const auto status = std::string(name_of(r.status));
    // Stopped with the service: it stays queued and resumes at the next start.
    if (stopping && r.status == job_status::interrupted) {
      store->set_state(r.name, "queued", "the service stopped; resumes at its next start");
      live.forget(r.name);
      return;
    }
    // A start that failed (an agent lost while the job set up, before its first step) is
    // transient: the job goes again, a few times, as a Kubernetes Job's backoffLimit would.
    if (r.status == job_status::failed && !r.bad_input && r.steps == 0 && !stopping) {
      const auto events = store->events(r.name);
      const auto retries = std::count_if(events.begin(), events.end(),
                                         [](const stored_event& e) { return e.event == "retry"; });
      if (retries < max_start_retries) {
        store->add_event(r.name, "retry", "its start failed: " + r.error);
        store->set_state(r.name, "queued", "its start failed; submitted again");
        live.forget(r.name);
        // submit() only sends to the task manager: safe on the runtime's metrics thread.
        const auto all = store->list();
        const auto sj = *store->get(r.name);
        submit_stored(sj, materialize(sj, all), all);
        return;
      }
    }
    live.on_end(r);
    store->finish(r.name, status,
                  redact(to_json(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)),
                  redact(r.error));
  }

  // The task manager's schedule events for a job (its log lines named by the id): "started on
  // ...", "paused at step ...", "pausing ...".
  void on_event(const std::string& id, const std::string& text) {
    if (!store->get(id)) return;
    if (text.rfind("started", 0) == 0) {
      store->set_state(id, "running");
      store->add_event(id, "start", text);
    } else if (text.rfind("paused at step", 0) == 0) {
      store->set_state(id, "paused", text);
    } else if (text.rfind("pausing", 0) == 0) {
      store->add_event(id, "pausing", text);
    }
  }

  // The job's own course: failures, restarts, a resume and injected faults go into its history
  // (membership changes, rebalances, detections and recoveries stay in the report's events).
  void on_course(const std::string& id, const job_event& e) {
    if (e.kind != "failure" && e.kind != "restart" && e.kind != "resume" && e.kind != "fault")
      return;
    if (store->get(id)) store->add_event(id, e.kind, e.detail);
  }
};

job_service::job_service(service_options o) : st_(std::make_unique<state>()) {
  auto& st = *st_;
  st.opts = std::move(o);
  if (st.opts.state_dir.empty()) throw input_error("--state: a directory is needed");
  st.store = std::make_unique<job_store>(st.opts.state_dir, st.opts.reset);
  st.checkpoint_root = (fs::path(st.opts.state_dir) / "checkpoints").string();
  st.log_dir = (fs::path(st.opts.state_dir) / "logs").string();
  // The cluster is kept beside the database, so that a restart needs no flags.
  const auto kept = (fs::path(st.opts.state_dir) / "cluster.yaml").string();
  std::string text;
  std::string source = st.opts.cluster_file;
  if (!st.opts.cluster_file.empty()) {
    text = read_file_text(st.opts.cluster_file);
  } else if (fs::exists(kept)) {
    text = read_file_text(kept);
    source = kept;
  } else {
    throw input_error("--cluster FILE is needed at the first start (no " + kept + " yet)");
  }
  st.cluster = config::parse_cluster(text, source);
  if (source != kept) write_file(kept, text);

  config::run_config cfg;
  cfg.source = source;
  cfg.cluster = st.cluster;
  runtime_options ro;
  ro.log_dir = st.log_dir;
  ro.resume_dir = st.checkpoint_root;
  ro.listen = st.opts.listen;
  ro.control_port = st.opts.control_port;
  ro.join_token = st.opts.join_token;
  ro.state_dir = st.opts.state_dir;
  ro.insecure = st.opts.insecure;
  ro.agent_program = st.opts.agent_program;
  ro.step_deadline_seconds = st.opts.step_deadline_seconds;
  ro.service = true;
  ro.log_format = st.opts.log_format;
  st.rt = std::make_unique<runtime>(std::move(cfg), ro);
  state* s = &st;
  st.rt->on_job_end([s](const job_report& r) { s->on_end(r); });
  st.rt->on_log([s](const std::string& job, const std::string& text) {
    if (job == "agents")
      s->log(text);
    else
      s->on_event(job, text);
  });
  st.rt->on_metrics([s](const live_metrics& m) { s->live.on_step(m); });
  st.rt->on_event([s](const std::string& job, const job_event& e) {
    s->live.on_event(job, e);
    s->on_course(job, e);
  });
  st.rt->start();

  // What the last run left queued or running goes in again, in submission order.
  const auto all = st.store->list();
  for (const auto& sj : all) {
    if (has_ended(sj.state)) continue;
    try {
      auto job = st.materialize(sj, all);
      if (sj.state != "queued")
        st.store->set_state(sj.id, "queued",
                            "was " + sj.state + " when the service stopped; resumes from its " +
                                "newest checkpoint");
      st.store->add_event(sj.id, "recovered", "submitted again after a service start");
      st.submit_stored(sj, std::move(job), all);
    } catch (const input_error& e) {
      st.store->finish(sj.id, "failed", "", std::string("cannot be submitted again: ") + e.what());
    }
  }
  st.log("serving; state in " + st.opts.state_dir + ", agents join at " + st.opts.listen);
}

job_service::~job_service() {
  // The runtime first: its callbacks use the store.
  st_->rt.reset();
}

nlohmann::json job_service::submit(const std::string& yaml, const std::string& source,
                                   const std::vector<std::string>& sets) {
  return_free_memory();
  nlohmann::json jobs = nlohmann::json::array();
  for (const auto& j : add_jobs(yaml, source, sets))
    jobs.push_back({{"id", j.id}, {"name", j.name}, {"priority", j.priority}, {"state", j.state}});
  return {{"jobs", jobs}};
}

std::vector<stored_job> job_service::add_jobs(const std::string& yaml, const std::string& source,
                                              const std::vector<std::string>& sets) {
  auto& st = *st_;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    if (st.stopping) throw runtime_failure("the service is stopping; submit again after its start");
  }
  // Validate before anything is stored: a bad file queues nothing.
  std::vector<std::string> known;
  for (const auto& j : st.store->list()) {
    known.push_back(j.name);
    known.push_back(j.id);
  }
  const auto rc = config::parse_jobs(yaml, source, sets, st.cluster, known, st.checkpoint_root);
  std::vector<stored_job> rows;
  for (std::size_t i = 0; i < rc.jobs.size(); ++i) {
    stored_job sj;
    sj.name = rc.jobs[i].name;
    sj.priority = rc.jobs[i].priority;
    sj.source = source;
    sj.yaml = yaml;
    sj.sets = sets;
    sj.index = static_cast<int>(i);
    rows.push_back(std::move(sj));
  }
  const auto added = st.store->add(std::move(rows));
  const auto all = st.store->list();
  for (const auto& sj : added) st.submit_stored(sj, st.materialize(sj, all), all);
  return added;
}

nlohmann::json job_service::jobs() const {
  auto& st = *st_;
  const auto views = st.rt->jobs();
  std::map<std::string, const job_view*> by_id;
  // A name that ran again (a retried start) is listed once per run: the live one comes first.
  for (const auto& v : views) by_id.emplace(v.name, &v);
  nlohmann::json out = nlohmann::json::array();
  std::vector<std::pair<int, nlohmann::json>> live;
  std::lock_guard<std::mutex> lock(st.mu);
  for (const auto& sj : st.store->list()) {
    nlohmann::json j = {{"id", sj.id},         {"name", sj.name},
                        {"state", sj.state},   {"priority", sj.priority},
                        {"starts", sj.starts}, {"submitted_at", sj.submitted_at}};
    const auto v = by_id.find(sj.id);
    int order = 1 << 30;
    if (v != by_id.end() && !has_ended(sj.state)) {
      if (v->second->position >= 0) order = v->second->position;
      j["position"] = v->second->position;
      j["reason"] = v->second->reason.empty() ? sj.reason : v->second->reason;
      j["preemptible"] = v->second->preemptible;
    } else if (!sj.reason.empty() || !sj.error.empty()) {
      j["reason"] = sj.error.empty() ? sj.reason : sj.error;
    }
    st.live.describe(sj.id, j);
    if (!sj.report_json.empty()) {
      const auto report = nlohmann::json::parse(sj.report_json, nullptr, false);
      if (!report.is_discarded()) {
        j["step"] = report.value("steps", 0);
        if (report.contains("faults") && report["faults"].is_object())
          j["lost_steps"] = report["faults"].value("lost_steps", 0);
      }
    }
    // Queued first in start order, then running, then ended newest first.
    const int rank = sj.state == "queued" || sj.state == "paused" ? 0
                     : sj.state == "running"                      ? 1
                                                                  : 2;
    live.emplace_back(rank == 0 ? order : rank == 1 ? (1 << 30) : (1 << 30) + 1, std::move(j));
  }
  std::stable_sort(live.begin(), live.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<nlohmann::json> tail;
  for (auto& [rank, j] : live) {
    if (rank == (1 << 30) + 1)
      tail.push_back(std::move(j));
    else
      out.push_back(std::move(j));
  }
  for (auto it = tail.rbegin(); it != tail.rend(); ++it) out.push_back(std::move(*it));
  return {{"jobs", out}};
}

nlohmann::json job_service::job(const std::string& id) const {
  auto& st = *st_;
  const auto sj = st.store->get(id);
  if (!sj) throw not_found("no job '" + id + "'");
  nlohmann::json j = {{"id", sj->id},         {"name", sj->name},
                      {"state", sj->state},   {"priority", sj->priority},
                      {"source", sj->source}, {"index", sj->index},
                      {"sets", sj->sets},     {"submitted_at", sj->submitted_at},
                      {"starts", sj->starts}, {"reason", sj->reason},
                      {"error", sj->error}};
  nlohmann::json history = nlohmann::json::array();
  for (const auto& e : st.store->events(id))
    history.push_back({{"at", e.at}, {"event", e.event}, {"detail", e.detail}});
  j["history"] = history;
  if (!sj->report_json.empty())
    j["report"] = nlohmann::json::parse(sj->report_json, nullptr, false);
  st.live.describe(id, j);
  return j;
}

nlohmann::json job_service::series(const std::string& id) const {
  auto& st = *st_;
  const auto sj = st.store->get(id);
  if (!sj) throw not_found("no job '" + id + "'");
  if (auto live = st.live.series(id)) return *live;
  const auto report = nlohmann::json::parse(sj->report_json, nullptr, false);
  if (report.is_object() && report.contains("series"))
    return {{"series", report["series"]},
            {"events", report.value("events", nlohmann::json::array())}};
  // Queued, or paused between its runs: nothing yet.
  return {{"series", nullptr}, {"events", nlohmann::json::array()}};
}

void job_service::cancel(const std::string& id) {
  auto& st = *st_;
  const auto sj = st.store->get(id);
  if (!sj) throw not_found("no job '" + id + "'");
  if (has_ended(sj->state)) throw input_error("job '" + id + "' has ended (" + sj->state + ")");
  st.rt->cancel(id);
  st.store->add_event(id, "cancel", "asked through the API");
}

void job_service::inject(const std::string& id, const std::string& spec) {
  auto& st = *st_;
  if (!st.store->get(id)) throw not_found("no job '" + id + "'");
  st.rt->inject(id, spec);
  st.store->add_event(id, "inject", spec);
}

nlohmann::json job_service::logs(const std::string& id, std::uint64_t offset,
                                 std::size_t max_bytes) const {
  const auto sj = st_->store->get(id);
  if (!sj) throw not_found("no job '" + id + "'");
  return read_log(st_->log_dir, id, offset, max_bytes, has_ended(sj->state));
}

nlohmann::json job_service::agents() const {
  return agents_json(st_->rt->agents());
}

void job_service::drain_agent(const std::string& name) {
  try {
    st_->rt->drain_agent(name);
  } catch (const input_error& e) {
    throw not_found(e.what());
  }
  st_->log("drained agent '" + name + "' on the operator's word");
}

std::string job_service::metrics() const {
  std::map<std::string, int> by_state, by_health;
  for (const auto& state : job_states()) by_state[state] = 0;
  for (const auto& j : st_->store->list()) ++by_state[j.state];
  by_health["joined"] = by_health["lost"] = 0;
  for (const auto& a : st_->rt->agents()) ++by_health[a.lost_s ? "lost" : "joined"];
  return st_->live.metrics(by_state, by_health);
}

bool job_service::ready() const {
  std::lock_guard<std::mutex> lock(st_->mu);
  return !st_->stopping;
}

void job_service::stop(double seconds) {
  auto& st = *st_;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    if (st.stopping) return;
    st.stopping = true;
  }
  st.log("stopping: running jobs end at their next step boundary, after a checkpoint");
  st.rt->interrupt();
  // Each running job reports its end (on_end keeps it queued); wait for them, with a deadline.
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    const auto views = st.rt->jobs();
    if (std::none_of(views.begin(), views.end(),
                     [](const job_view& v) { return v.status == "running"; }))
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::uint16_t job_service::listen_port() const {
  return st_->rt->listen_port();
}

}  // namespace troupe::service
