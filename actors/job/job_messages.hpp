#pragma once
// Helpers every part of the job actor (job.cpp, job_membership, job_checkpoint) uses to address
// messages: stamped with the job's (job, generation), and log lines to the metrics hub.
#include <optional>
#include <string>
#include <utility>

#include "actors/job/job_state.hpp"

namespace troupe::actors {

template <class Message>
Message tagged(stateful<job_state>* self) {
  Message m;
  m.job = self->state.gate.job();
  m.generation = self->state.gate.generation();
  return m;
}

// A line of the job's log (the metrics hub writes it to the job's file and the terminal).
inline void log(stateful<job_state>* self, std::string text) {
  auto l = tagged<msg::log_line>(self);
  l.name = self->state.launch.cfg.name;
  l.text = std::move(text);
  if (self->state.launch.metrics_hub) self->send(self->state.launch.metrics_hub, std::move(l));
}

// An event of the job's course: into its timeline (the report's `events`), and to the metrics
// hub as a log line that says its kind (runtime::on_event: the dashboard's live timeline).
inline void note_event(stateful<job_state>* self, const std::string& kind, std::string detail,
                       std::optional<double> ms = std::nullopt) {
  auto& st = self->state;
  const double t = seconds_since(st.clock.job_t0);
  auto l = tagged<msg::log_line>(self);
  l.name = st.launch.cfg.name;
  l.text = detail;
  l.kind = kind;
  l.step = st.step;
  l.t = t;
  l.ms = ms.value_or(-1.0);
  if (st.launch.metrics_hub) self->send(st.launch.metrics_hub, std::move(l));
  st.timeline.event({t, st.step, kind, std::move(detail), ms});
}

}  // namespace troupe::actors
