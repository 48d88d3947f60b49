#include "actors/tasks/share_allocator.hpp"

#include <chrono>
#include <cstdio>

namespace troupe::actors {

void share_book::join(const std::string& name, msg::job_id job, double weight, std::int64_t batch) {
  double total_w = weight, total_s = 0.0;
  for (const auto& [n, m] : members_)
    if (n != name) {
      total_w += m.weight;
      total_s += m.share;
    }
  const double mine = weight / total_w;
  // The others keep their relative shares within what is left.
  for (auto& [n, m] : members_)
    if (n != name) m.share = total_s > 0 ? m.share / total_s * (1.0 - mine) : m.weight / total_w;
  auto& m = members_[name];
  m = share_member_state{};
  m.job = job;
  m.weight = weight;
  m.share = mine;
  m.batch = batch;
}

void share_book::leave(const std::string& name) {
  members_.erase(name);
  double total = 0.0;
  for (const auto& [n, m] : members_) total += m.share;
  if (total > 0)
    for (auto& [n, m] : members_) m.share /= total;
}

void share_book::observe(const msg::step_metrics& m) {
  auto it = members_.find(m.name);
  if (it == members_.end() || it->second.job != m.job) return;
  auto& s = it->second;
  ++s.window_steps;
  s.window_samples += m.samples;
  s.window_seconds += m.step_seconds;
  if (m.noise_scale > 0) s.b_noise = m.noise_scale;
}

msg::share_decision share_book::current(const std::string& reason) const {
  msg::share_decision d;
  for (const auto& [n, m] : members_) {
    d.names.push_back(n);
    d.shares.push_back(m.share);
  }
  d.reason = reason;
  return d;
}

std::optional<msg::share_decision> share_book::decide() {
  std::optional<msg::share_decision> out;
  bool measured = members_.size() >= 2;
  for (const auto& [n, m] : members_)
    measured = measured && m.window_steps >= options_.min_steps && m.window_seconds > 0;
  if (measured) {
    std::vector<policies::job_share_state> jobs;
    for (const auto& [n, m] : members_) {
      policies::job_share_state j;
      j.weight = m.weight;
      j.share = m.share;
      j.throughput = static_cast<double>(m.window_samples) / m.window_seconds;
      j.batch = static_cast<double>(m.batch);
      j.b0 = 1.0;  // efficiency relative to per-sample SGD (header)
      j.b_noise = m.b_noise;
      jobs.push_back(j);
    }
    auto opts = options_.policy;
    // Every member must fit above the floor.
    opts.floor = std::min(opts.floor, 0.5 / static_cast<double>(jobs.size()));
    const auto dec = policies::adaptive_shares(jobs, opts);
    if (dec.changed) {
      std::size_t i = 0;
      std::string why = dec.reason + ";";
      for (auto& [n, m] : members_) {
        const double e =
            m.b_noise ? policies::statistical_efficiency(*m.b_noise, jobs[i].batch, 1.0) : 1.0;
        char buf[160];
        std::snprintf(buf, sizeof buf, " %s %.3f->%.3f (%.1f samples/s, E %.3f)", n.c_str(),
                      m.share, dec.shares[i], jobs[i].throughput, e);
        why += buf;
        m.share = dec.shares[i++];
      }
      out = current(why);
    }
  }
  for (auto& [n, m] : members_) {
    m.window_steps = 0;
    m.window_samples = 0;
    m.window_seconds = 0.0;
  }
  return out;
}

caf::behavior share_allocator(stateful<share_allocator_state>* self, caf::actor task_manager,
                              caf::actor metrics_hub, share_allocator_options options) {
  auto& st = self->state;
  st.book = share_book{options};
  st.task_manager = std::move(task_manager);
  st.metrics_hub = std::move(metrics_hub);
  if (st.metrics_hub)
    self->send(st.metrics_hub, msg::subscribe_atom_v, caf::actor_cast<caf::actor>(self));
  const auto period = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::duration<double>(options.period_seconds));
  self->delayed_send(self, period, msg::share_tick_atom_v);
  auto log = [=](const std::string& text) {
    if (!self->state.metrics_hub) return;
    msg::log_line l;
    l.name = "share_allocator";
    l.text = text;
    self->send(self->state.metrics_hub, l);
  };
  return {
      // Edge 1.
      [=](const msg::share_member& m) {
        auto& st = self->state;
        if (!m.active) {
          st.book.leave(m.name);
          return;
        }
        st.book.join(m.name, m.job, m.weight, m.batch);
        auto d = st.book.current("job '" + m.name + "' joined");
        log(d.reason);
        self->send(st.task_manager, std::move(d));
      },
      // Edge 2.
      [=](const msg::step_metrics& m) { self->state.book.observe(m); },
      // Edge 3.
      [=](msg::share_tick_atom) {
        auto& st = self->state;
        if (auto d = st.book.decide()) {
          ++st.decisions;
          log("decision " + std::to_string(st.decisions) + ": " + d->reason);
          self->send(st.task_manager, std::move(*d));
        }
        self->delayed_send(self, period, msg::share_tick_atom_v);
      },
  };
}

}  // namespace troupe::actors
