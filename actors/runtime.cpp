#include "actors/runtime.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include "actors/agents/agent_listener.hpp"
#include "actors/agents/agent_registry.hpp"
#include "actors/agents/child_agents.hpp"
#include "actors/agents/control_tls.hpp"
#include "actors/common/caf_compat.hpp"
#include "actors/observe/metrics_hub.hpp"
#include "actors/tasks/task_manager.hpp"
#include "collectives/codecs/codec.hpp"
#include "collectives/store_actor.hpp"
#include "collectives/zmq/zmq_link.hpp"
#include "core/cluster_keys.hpp"
#include "core/error.hpp"
#include "core/fault_spec.hpp"
#include "core/job_rules.hpp"
#include "core/json_log.hpp"
#include "core/launcher_env.hpp"
#include "core/secret.hpp"
#include "core/writable_paths.hpp"

namespace troupe {
namespace {

void check_job(const config::job_config& job) {
  // Embedding apps build configs without config_load: the same rules as there.
  if (const auto r = config::job_rule_violation(job))
    throw input_error("job '" + job.name + "': " + (r->section.empty() ? "" : r->section + ".") +
                      r->key + ": " + r->what);
  // The codec's spec is collectives' to read (core cannot see it). The SPD codecs are for
  // symmetric positive definite matrices, not gradients.
  if (!job.sync.codec.empty()) {
    const auto where = "job '" + job.name + "': sync.codec: ";
    if (job.sync.codec.rfind("spd", 0) == 0)
      throw input_error(where + "'" + job.sync.codec +
                        "' encodes SPD matrices; gradients take fp16, bf16, topk[:ratio] or "
                        "powersgd[:rank]");
    try {
      collectives::make_codec(job.sync.codec);
    } catch (const std::exception& e) {
      throw input_error(where + e.what());
    }
  }
}

}  // namespace

struct runtime::impl {
  std::string created_at;  // when start() ran, for the report
  config::run_config cfg;
  runtime_options opts;
  std::shared_ptr<metrics_subscribers> subscribers = std::make_shared<metrics_subscribers>();
  caf::actor_system_config caf_cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::actor hub;
  caf::actor tm;
  caf::actor registry;  // with opts.listen
  std::uint16_t port = 0;
  std::shared_ptr<const cluster_keys> keys;              // with listen, unless insecure
  std::shared_ptr<actors::join_endpoint> join_endpoint;  // with listen
  std::shared_ptr<actors::agent_records> agents;
  std::shared_ptr<actors::agent_directory> directory;  // with listen
  std::unique_ptr<actors::child_agents> children;      // process: separate groups
  bool started = false;
  // interrupt() before start() made the task manager: it is told when it exists.
  std::mutex interrupt_mu;
  bool interrupted = false;
  // --insecure with a listener: the warning every minute.
  std::thread insecure_warnings;
  std::mutex warn_mu;
  std::condition_variable warn_cv;
  bool warn_stop = false;
};

runtime::runtime(config::run_config cfg, runtime_options opts) : impl_(std::make_unique<impl>()) {
  if (cfg.cluster.groups.empty()) throw input_error(cfg.source + ": cluster.groups is empty");
  const auto remote = actors::agent_groups(cfg.cluster);
  for (const auto& g : remote) {
    if (g.process == group_process::separate && opts.agent_program.empty())
      throw input_error("group '" + g.name +
                        "': process: separate needs the troupe executable to start its agent "
                        "(runtime_options::agent_program)");
    if (g.process == group_process::agent && opts.listen.empty())
      throw input_error("group '" + g.name +
                        "': process: agent needs a listener for its agent to join (--listen "
                        "HOST:PORT)");
  }
  if (!remote.empty()) {
    if (opts.listen.empty()) opts.listen = "127.0.0.1:0";
    // A service holds each job for its own agents instead (task_manager_options).
    if (!opts.service)
      opts.wait_agents = std::max(opts.wait_agents, actors::agents_to_wait_for(cfg));
  }
  if (!opts.listen.empty()) parse_join(opts.listen, "--listen", true);
  if (!opts.join_token.empty() && opts.join_token.size() < 16)
    throw input_error("--token: a join token must be at least 16 characters");
  register_secret(opts.join_token);
  for (const auto& j : cfg.jobs) {
    check_job(j);
    // A checkpoint directory that cannot be written is refused now, not found out at the first
    // checkpoint (after which the job would train on with none).
    const auto& c = j.checkpoint;
    if (!c.dir.empty() && (c.every_steps > 0 || c.every_seconds > 0 || c.at_stop))
      require_writable_dir(c.dir, "job '" + j.name + "': checkpoint.dir");
  }
  if (opts.log_format != "text" && opts.log_format != "json")
    throw input_error("--log-format must be text or json, got '" + opts.log_format + "'");
  impl_->cfg = std::move(cfg);
  impl_->opts = std::move(opts);
}

runtime::~runtime() {
  if (impl_->insecure_warnings.joinable()) {
    {
      std::lock_guard<std::mutex> lock(impl_->warn_mu);
      impl_->warn_stop = true;
    }
    impl_->warn_cv.notify_all();
    impl_->insecure_warnings.join();
  }
  if (!impl_->sys) return;
  // Agents can no longer join once the run ends.
  impl_->join_endpoint.reset();
  actors::set_control_tls_log(nullptr);
  if (impl_->children) impl_->children->stop_respawning();
  // A service's agents outlive it: they rejoin its next start instead of exiting.
  if (impl_->registry && !impl_->opts.service)
    caf::anon_send(impl_->registry, msg::agent_bye_atom_v);
  else if (impl_->registry)
    caf::anon_send_exit(impl_->registry, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(impl_->tm, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(impl_->hub, caf::exit_reason::user_shutdown);
  if (impl_->directory)
    caf::anon_send_exit(impl_->directory->store(), caf::exit_reason::user_shutdown);
  {
    std::lock_guard<std::mutex> lock(impl_->interrupt_mu);
    impl_->tm = nullptr;
  }
  impl_->hub = nullptr;
  impl_->sys->await_all_actors_done();
  // Child agents leave on the bye; one that does not within 5 s is killed.
  if (impl_->children) impl_->children->stop(5.0);
}

void runtime::register_model(const std::string& kind, models::model_factory factory) {
  models::register_model(kind, std::move(factory));
}

void runtime::on_metrics(metrics_callback f) {
  impl_->subscribers->on_step.push_back(std::move(f));
}
void runtime::on_log(log_callback f) {
  impl_->subscribers->on_log.push_back(std::move(f));
}
void runtime::on_job_end(job_end_callback f) {
  impl_->subscribers->on_job_end.push_back(std::move(f));
}
void runtime::on_event(event_callback f) {
  impl_->subscribers->on_event.push_back(std::move(f));
}

void runtime::start() {
  if (impl_->started) return;
  impl_->started = true;
  impl_->created_at = utc_now_iso8601();
  actors::register_types(impl_->caf_cfg);
  if (!impl_->opts.scheduler_policy.empty())
    impl_->caf_cfg.set("scheduler.policy", caf::atom_from_string(impl_->opts.scheduler_policy));
  if (impl_->opts.scheduler_threads > 0)
    impl_->caf_cfg.set("scheduler.max-threads", static_cast<size_t>(impl_->opts.scheduler_threads));
  if (!impl_->opts.listen.empty()) {
    actors::use_agent_middleman(impl_->caf_cfg);
    collectives::add_store_types(impl_->caf_cfg);
    // --insecure: plain data-plane links too (their keys would cross a plain control port).
    if (impl_->opts.insecure) collectives::set_curve_by_default(false);
    if (!impl_->opts.insecure) {
      const auto dir = default_state_dir(impl_->opts.state_dir);
      impl_->keys = std::make_shared<const cluster_keys>(
          open_cluster_keys(dir, {parse_join(impl_->opts.listen, "--listen", true).host}));
      actors::use_control_tls(
          impl_->caf_cfg,
          {impl_->keys->control_cert_path, impl_->keys->control_key_path, impl_->keys->ca_path});
    }
  }
  impl_->sys = std::make_unique<caf::actor_system>(impl_->caf_cfg);
  if (!impl_->opts.listen.empty())
    impl_->directory =
        std::make_shared<actors::agent_directory>(collectives::spawn_store_actor(*impl_->sys));
  impl_->hub = impl_->sys->spawn(
      actors::metrics_hub, std::shared_ptr<const metrics_subscribers>(impl_->subscribers),
      impl_->opts.log_dir, impl_->opts.service || !impl_->opts.resume_dir.empty(),
      impl_->opts.log_format == "json");
  actors::task_manager_options tmo;
  tmo.cluster = impl_->cfg.cluster;
  tmo.metrics_hub = impl_->hub;
  const auto tmo_t0 = steady::now();
  tmo.run_t0 = tmo_t0;
  tmo.step_deadline_seconds = impl_->opts.step_deadline_seconds;
  tmo.resume_dir = impl_->opts.resume_dir;
  tmo.agents = impl_->directory;
  tmo.hold_for_agents = impl_->opts.service;
  {
    auto tm = impl_->sys->spawn(actors::task_manager, std::move(tmo));
    std::lock_guard<std::mutex> lock(impl_->interrupt_mu);
    impl_->tm = tm;
    if (impl_->interrupted) caf::anon_send(tm, msg::interrupt_atom_v);
  }
  if (!impl_->opts.listen.empty()) {
    actors::agent_listen_options lo;
    lo.address = impl_->opts.listen;
    lo.keys = impl_->keys;
    if (impl_->keys)
      lo.token = [given = impl_->opts.join_token, dir = impl_->keys->state_dir] {
        return given.empty() ? read_token(dir) : given;
      };
    const auto hub_log = [hub = impl_->hub](const std::string& line) {
      caf::anon_send(hub, msg::log_line{0, 0, "agents", line, {}, 0, 0.0, -1.0});
    };
    actors::set_control_tls_log(hub_log);
    // Children get the token and the CA through their environment, never the command line;
    // the token as it is at each (re)start.
    std::function<std::vector<std::string>()> child_env = [token = lo.token, keys = impl_->keys] {
      if (!keys) return std::vector<std::string>{};
      return std::vector<std::string>{
          "TROUPE_TOKEN=" + token(),
          "TROUPE_CA=" + std::filesystem::absolute(keys->ca_path).string()};
    };
    lo.control_port = impl_->opts.control_port;
    lo.wait_agents = impl_->opts.wait_agents;
    lo.wait_seconds = impl_->opts.agent_wait_seconds;
    lo.registry.t0 = tmo_t0;
    lo.registry.directory = impl_->directory;
    lo.registry.notify = impl_->tm;
    for (const auto& g : actors::agent_groups(impl_->cfg.cluster))
      lo.registry.groups.push_back({g.name, g.device, g.count});
    // Children join where the run listens: loopback unless --listen names one address.
    auto child_host = parse_join(impl_->opts.listen, "--listen", true).host;
    if (child_host.empty() || child_host == "0.0.0.0" || child_host == "::" || child_host == "[::]")
      child_host = "127.0.0.1";
    lo.on_listening = [this, child_host, child_env](std::uint16_t port) {
      impl_->children = std::make_unique<actors::child_agents>(
          impl_->opts.agent_program, impl_->cfg.cluster, child_host, port, child_env,
          impl_->opts.insecure, [hub = impl_->hub](const std::string& line) {
            caf::anon_send(hub, msg::log_line{0, 0, "agents", line, {}, 0, 0.0, -1.0});
          });
    };
    lo.registry.log = [hub = impl_->hub](const std::string& line) {
      caf::anon_send(hub, msg::log_line{0, 0, "agents", line, {}, 0, 0.0, -1.0});
    };
    const auto l = actors::listen_for_agents(*impl_->sys, lo);
    impl_->registry = l.registry;
    impl_->port = l.port;
    impl_->join_endpoint = l.endpoint;
    if (impl_->opts.insecure)
      impl_->insecure_warnings = std::thread([this, hub_log, at = impl_->opts.listen] {
        std::unique_lock<std::mutex> lock(impl_->warn_mu);
        while (!impl_->warn_cv.wait_for(lock, std::chrono::seconds(60),
                                        [this] { return impl_->warn_stop; }))
          hub_log("warning: --insecure: " + at +
                  " takes agents from any host that reaches it, without a token or TLS");
      });
    impl_->agents = l.records;
  }
  for (const auto& j : impl_->cfg.jobs) {
    auto req = std::make_shared<actors::job_request>();
    req->config = j;
    caf::anon_send(impl_->tm, msg::submit_atom_v, msg::local_ref<actors::job_request>{req});
  }
}

std::uint16_t runtime::listen_port() const {
  return impl_->port;
}

void runtime::interrupt() {
  std::lock_guard<std::mutex> lock(impl_->interrupt_mu);
  impl_->interrupted = true;
  if (impl_->tm) caf::anon_send(impl_->tm, msg::interrupt_atom_v);
}

void runtime::submit(config::job_config job) {
  check_job(job);
  start();
  auto req = std::make_shared<actors::job_request>();
  req->config = std::move(job);
  caf::anon_send(impl_->tm, msg::submit_atom_v, msg::local_ref<actors::job_request>{req});
}

namespace {

// A question to an actor of the runtime (the task manager, the agent registry) from a thread
// outside the actor system, with a deadline.
template <class Result, class... Ts>
Result ask(caf::actor_system& sys, const caf::actor& tm, Ts&&... xs) {
  caf::scoped_actor self{sys};
  Result out{};
  std::string failure;
  self->request(tm, std::chrono::seconds(30), std::forward<Ts>(xs)...)
      .receive([&](Result& r) { out = std::move(r); },
               [&](caf::error& e) { failure = actors::failure_text(sys, e); });
  if (!failure.empty()) throw runtime_failure("asking the runtime: " + failure);
  return out;
}

}  // namespace

void runtime::cancel(const std::string& job) {
  start();
  const auto why = ask<std::string>(*impl_->sys, impl_->tm, msg::cancel_atom_v, job);
  if (!why.empty()) throw input_error(why);
}

void runtime::inject(const std::string& job, const std::string& spec) {
  start();
  // The target must be a device of the cluster; the job then checks it holds it.
  const auto f =
      config::parse_fault(spec.find('@') == std::string::npos ? spec + "@0" : spec, "inject");
  config::check_fault_target(f, impl_->cfg.cluster, spec, "inject");
  const auto why = ask<std::string>(*impl_->sys, impl_->tm, msg::inject_atom_v, job, spec);
  if (!why.empty()) throw input_error(why);
}

std::vector<job_view> runtime::jobs() const {
  if (!impl_->sys) return {};
  const auto view =
      ask<msg::local_ref<actors::jobs_view>>(*impl_->sys, impl_->tm, msg::jobs_atom_v);
  return view ? view->jobs : std::vector<job_view>{};
}

std::vector<agent_report> runtime::agents() const {
  if (!impl_->agents) return {};
  std::lock_guard<std::mutex> lock(impl_->agents->mu);
  return impl_->agents->list;
}

void runtime::drain_agent(const std::string& name) {
  if (!impl_->registry)
    throw input_error("no agent named '" + name + "': nothing listens for agents");
  const auto why = ask<std::string>(*impl_->sys, impl_->registry, msg::agent_leave_atom_v, name);
  if (!why.empty()) throw input_error(why);
}

run_report runtime::wait() {
  start();
  caf::scoped_actor self{*impl_->sys};
  const auto limit = impl_->opts.wait_seconds > 0 ? actors::to_timespan(impl_->opts.wait_seconds)
                                                  : caf::timespan{std::chrono::hours(24 * 365)};
  run_report out;
  std::string failure;
  self->request(impl_->tm, limit, msg::wait_atom_v)
      .receive([&](msg::local_ref<actors::run_report_data>& r) { out = r->report; },
               [&](caf::error& e) { failure = actors::failure_text(*impl_->sys, e); });
  if (!failure.empty()) throw runtime_failure("waiting for the jobs: " + failure);
  out.troupe_version = actors::troupe_version();
  out.created_at = impl_->created_at;
  out.config_source = impl_->cfg.source;
  out.config_sets = impl_->cfg.sets;
  out.config_yaml = impl_->cfg.as_run;
  rusage usage{};
  // Linux reports ru_maxrss in KiB.
  if (::getrusage(RUSAGE_SELF, &usage) == 0)
    out.peak_rss_bytes = static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
  self->request(impl_->hub, std::chrono::seconds(10), msg::query_atom_v)
      .receive([](bool) {}, [](caf::error&) {});
  // The run is over: joined agents exit instead of waiting to rejoin.
  if (impl_->children) impl_->children->stop_respawning();
  if (impl_->registry && !impl_->opts.service)
    caf::anon_send(impl_->registry, msg::agent_bye_atom_v);
  if (impl_->agents) {
    std::lock_guard<std::mutex> lock(impl_->agents->mu);
    out.agents = impl_->agents->list;
  }
  return out;
}

}  // namespace troupe
