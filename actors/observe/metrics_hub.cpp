#include "actors/observe/metrics_hub.hpp"

#include <filesystem>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

#include "actors/common/payloads.hpp"
#include "core/json_log.hpp"
#include "core/secret.hpp"

namespace troupe::actors {
namespace {

spdlog::logger* log_of(hub_state& st, const std::string& job) {
  if (st.log_dir.empty()) return nullptr;
  auto it = st.logs.find(job);
  if (it != st.logs.end()) return it->second.get();
  std::error_code ec;
  std::filesystem::create_directories(st.log_dir, ec);
  try {
    auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(st.log_dir + "/" + job + ".log",
                                                                    !st.append_logs);
    auto lg = std::make_shared<spdlog::logger>("job:" + job, sink);
    // JSON lines carry their own time (json_line).
    lg->set_pattern(st.json_logs ? "%v" : "[%Y-%m-%d %H:%M:%S.%e] %v");
    // Every line: after a kill -9 the log still says which step the job had completed (the
    // resume test reads it); one fflush per step is noise next to a step.
    lg->flush_on(spdlog::level::info);
    st.logs[job] = lg;
    // An appended log (a resumed run, a service's job started again) says where this run's
    // lines begin.
    if (st.append_logs) {
      const std::string mark = "---- a new run of job '" + job + "' begins here ----";
      lg->info("{}", st.json_logs ? json_line(job, 0, 0, mark) : mark);
    }
    return lg.get();
  } catch (const spdlog::spdlog_ex&) {
    st.logs[job] = nullptr;  // an unwritable log dir must not stop training
    return nullptr;
  }
}

// One line of a job's log: the text as it is, or (json_logs) one JSON object for log shippers.
void write(hub_state& st, const std::string& job, msg::generation_id generation,
           const std::string& message) {
  auto* lg = log_of(st, job);
  if (!lg) return;
  if (!st.json_logs) {
    lg->info("{}", message);
    return;
  }
  const auto steps = st.steps.find(job);
  lg->info("{}", json_line(job, generation, steps == st.steps.end() ? 0 : steps->second, message));
}

}  // namespace

live_metrics to_live(const msg::step_metrics& m) {
  std::vector<std::pair<std::string, std::int64_t>> split;
  for (std::size_t i = 0; i < m.groups.size() && i < m.group_samples.size(); ++i)
    split.emplace_back(m.groups[i], m.group_samples[i]);
  // In live_metrics' field order.
  return {m.name,
          m.step,
          m.steps_total,
          m.data_epoch,
          m.epochs,
          m.loss,
          m.samples_per_second,
          m.step_seconds,
          m.elapsed_seconds,
          std::move(split),
          m.imbalance_index,
          m.noise_scale,
          m.worker_samples,
          m.worker_compute_seconds,
          m.reduce_seconds,
          m.sync_period,
          m.share,
          m.rebalances,
          m.wire_bytes};
}

caf::behavior metrics_hub(stateful<hub_state>* self,
                          std::shared_ptr<const metrics_subscribers> subscribers,
                          std::string log_dir, bool append_logs, bool json_logs) {
  self->state.subscribers = std::move(subscribers);
  self->state.log_dir = std::move(log_dir);
  self->state.append_logs = append_logs;
  self->state.json_logs = json_logs;
  return {
      [=](const msg::step_metrics& m) {
        auto& st = self->state;
        auto live = to_live(m);
        st.steps[m.name] = m.step;
        if (!st.log_dir.empty()) {
          std::string split;
          for (const auto& [g, n] : live.split) split += " " + g + "=" + std::to_string(n);
          write(st, m.name, m.generation,
                fmt::format("step {}/{} epoch {} loss {:.4f} step_s {:.4f} samples/s {:.1f} "
                            "split{} imbalance {:.3f} b_noise {:.0f}",
                            m.step, m.steps_total, m.data_epoch + 1, m.loss, m.step_seconds,
                            m.samples_per_second, split, m.imbalance_index, m.noise_scale));
        }
        for (const auto& f : st.subscribers->on_step) f(live);
        for (const auto& a : st.policy_actors) self->send(a, m);
      },
      // A policy actor (share_allocator) asks for every step_metrics from now on.
      [=](msg::subscribe_atom, const caf::actor& a) { self->state.policy_actors.push_back(a); },
      [=](const msg::log_line& line) {
        auto& st = self->state;
        // Every line passes redact() once, here: no secret reaches a log, a callback or an event.
        msg::log_line l = line;
        l.text = redact(std::move(l.text));
        write(st, l.name, l.generation, l.text);
        for (const auto& f : st.subscribers->on_log) f(l.name, l.text);
        if (l.kind.empty() || st.subscribers->on_event.empty()) return;
        job_event e{l.t, l.step, l.kind, l.text, std::nullopt};
        if (l.ms >= 0) e.ms = l.ms;
        for (const auto& f : st.subscribers->on_event) f(l.name, e);
      },
      // A barrier: answered after everything sent to the hub before it (runtime::wait uses it so
      // that every log line is out before the report).
      [=](msg::query_atom) { return true; },
      [=](const msg::job_finished& f) {
        auto& st = self->state;
        write(st, f.name, f.generation,
              std::string("finished: ") + name_of(f.status) +
                  (f.error.empty() ? "" : " (" + f.error + ")"));
        if (auto* lg = log_of(st, f.name)) lg->flush();
        // The logger stays: the task manager's last event for this job still goes to its file.
      },
      // From the task manager, after its last event for the job: the subscribers get the report
      // and the job's file is closed (a service runs jobs for weeks; each open log is a file
      // descriptor).
      [=](msg::job_end_atom, const msg::local_ref<job_report_data>& r) {
        auto& st = self->state;
        if (!r) return;
        for (const auto& f : st.subscribers->on_job_end) f(r->report);
        const auto it = st.logs.find(r->report.name);
        if (it == st.logs.end()) return;
        if (it->second) it->second->flush();
        st.logs.erase(it);
        st.steps.erase(r->report.name);
      },
  };
}

}  // namespace troupe::actors
