#include "actors/agents/agent.hpp"

#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>
#include <thread>

#include <caf/io/middleman.hpp>
#include <caf/node_id.hpp>

#include "actors/agents/agent_enroll.hpp"
#include "actors/agents/agent_registry.hpp"
#include "actors/agents/agent_roster.hpp"
#include "actors/agents/control_tls.hpp"
#include "actors/agents/worker_host.hpp"
#include "actors/common/caf_compat.hpp"
#include "collectives/store_actor.hpp"
#include "collectives/zmq/zmq_link.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/host_address.hpp"
#include "core/pki.hpp"

namespace troupe::actors {
namespace {

enum class session_end { bye, lost, refused, unreachable, stopped };

// A file that lives in memory only (memfd), for what CAF's OpenSSL module reads by path: the
// agent's key and certificate never touch a disk and vanish with the process.
class memory_file {
 public:
  explicit memory_file(const char* name) : fd_(::memfd_create(name, MFD_CLOEXEC)) {
    if (fd_ < 0) throw runtime_failure(std::string("memfd_create: ") + std::strerror(errno));
  }
  ~memory_file() { ::close(fd_); }
  memory_file(const memory_file&) = delete;
  memory_file& operator=(const memory_file&) = delete;
  void write(const std::string& content) {
    if (::ftruncate(fd_, 0) != 0 ||
        ::pwrite(fd_, content.data(), content.size(), 0) != static_cast<ssize_t>(content.size()))
      throw runtime_failure(std::string("memfd write: ") + std::strerror(errno));
  }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

// The agent's TLS identity: a key made at start, and the certificate of the latest join.
struct agent_identity {
  std::string key_pem = pki::make_key();
  memory_file key{"troupe-agent-key"};
  memory_file cert{"troupe-agent-cert"};
  agent_identity() { key.write(key_pem); }
};

bool stopping(const agent_options& o) {
  return o.stop && o.stop->load();
}

// One attempt: connect, hello, then stay joined until the run ends or the link is lost.
session_end join_once(caf::actor_system& sys, const agent_options& o, const std::string& where,
                      agent_identity* identity, worker_hosts& hosts,
                      const std::function<void(const std::string&)>& log, std::string& why) {
  enroll_request er;
  er.host = o.host;
  er.port = o.port;
  er.name = o.name;
  er.token = o.token;
  if (o.token_source) {
    try {
      er.token = o.token_source();
    } catch (const std::exception&) {
      // Unreadable now (a rotation writing it): the token the agent started with.
    }
  }
  er.ca_path = identity ? o.ca_path : "";
  er.key_pem = identity ? identity->key_pem : "";
  er.timeout_seconds = o.attempt_seconds;
  const auto e = enroll(er);
  if (e.result != enroll_answer::outcome::joined) {
    why = e.why;
    return e.result == enroll_answer::outcome::refused ? session_end::refused
                                                       : session_end::unreachable;
  }
  if (identity) identity->cert.write(e.certificate);
  caf::scoped_actor self{sys};
  const auto attempt = to_timespan(o.attempt_seconds);
  caf::actor registry;
  const auto mm = identity ? tls_middleman(sys) : sys.middleman().actor_handle();
  self->request(mm, attempt, caf::connect_atom_v, o.host, e.control_port)
      .receive(
          [&](const caf::node_id&, caf::strong_actor_ptr& ptr, const std::set<std::string>&) {
            registry = caf::actor_cast<caf::actor>(ptr);
            if (!registry) why = "nothing is published there";
          },
          [&](caf::error& e) { why = failure_text(sys, e); });
  if (!registry) {
    why = "control port " + std::to_string(e.control_port) + ": " + why;
    return session_end::unreachable;
  }

  msg::agent_hello h;
  h.version = troupe_version();
  h.name = o.name;
  h.group = o.group;
  h.device = o.device;
  h.count = o.count;
  h.threads = o.threads;
  h.host = host_name();
  h.pid = static_cast<std::int64_t>(::getpid());
  h.ticket = e.ticket;
  msg::agent_answer answer;
  bool answered = false;
  self->request(registry, attempt, h)
      .receive(
          [&](msg::agent_answer& a) {
            answer = std::move(a);
            answered = true;
          },
          [&](caf::error& e) { why = failure_text(sys, e); });
  if (!answered) return session_end::unreachable;
  if (!answer.accepted) {
    why = answer.reason;
    return session_end::refused;
  }
  log("joined " + where + " as member " + std::to_string(answer.member) + ": " + describe(h));
  if (o.status) {
    o.status->joined = true;
    ++o.status->joins;
  }

  self->monitor(registry);
  std::optional<session_end> end;
  while (!end)
    self->receive(
        [&](msg::agent_bye_atom) { end = session_end::bye; },
        [&](const caf::down_msg& d) {
          if (d.source != registry.address()) return;
          why = failure_text(sys, d.reason);
          end = session_end::lost;
        },
        // A worker of the run computes on a device of this group.
        [&](const msg::host_worker& w) {
          const auto to = caf::actor_cast<caf::actor>(self->current_sender());
          const auto a = hosts.host(w);
          if (to) self->send(to, a);
        },
        // The run gave up a process ring (a member was lost): stop waiting in it.
        [&](msg::ring_abort_atom, const std::string& prefix) { hosts.abort_ring(prefix); },
        // Anything else a remote peer sends is not ours to act on.
        [&](caf::message&) {},
        caf::after(std::chrono::milliseconds(100)) >>
            [&] {
              if (stopping(o)) end = session_end::stopped;
            });
  // Leaving: the registry is told, so the run sees the agent go instead of waiting for its
  // connection or heartbeat to say so. It answers once the jobs let this group go at their next
  // step boundary (its workers here keep computing until then), or after its own deadline.
  if (*end == session_end::stopped)
    self->request(registry, to_timespan(msg::group_leave_seconds + 10), msg::agent_leave_atom_v)
        .receive([](msg::agent_leave_atom) {}, [](caf::error&) {});
  return *end;
}

}  // namespace

int run_agent(const agent_options& o, const std::function<void(const std::string&)>& log) {
  if (o.parent > 0) {
    // SIGKILL when the parent thread dies; checked after, since the parent may be gone already.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != static_cast<pid_t>(o.parent)) {
      log("the process that started this agent (pid " + std::to_string(o.parent) +
          ") is gone; exiting");
      return 1;
    }
  }
  // With TLS: a key of its own, a certificate per join, the cluster's CA to check the control
  // process against; refused handshakes are logged with the peer's address.
  std::unique_ptr<agent_identity> identity;
  caf::actor_system_config cfg;
  register_types(cfg);
  collectives::add_store_types(cfg);
  use_agent_middleman(cfg);
  if (o.insecure) collectives::set_curve_by_default(false);
  if (!o.insecure) {
    identity = std::make_unique<agent_identity>();
    use_control_tls(cfg, {identity->cert.path(), identity->key.path(), o.ca_path});
    set_control_tls_log(log);
  }
  // `log` may not outlive this call.
  struct unset_log {
    ~unset_log() { set_control_tls_log(nullptr); }
  } unset_on_return;
  cfg.set("scheduler.policy", caf::atom("sharing"));
  caf::actor_system sys{cfg};
  const std::string where = o.host + ":" + std::to_string(o.port);
  // The interface tcp data links bind on: the one that routes to the control process.
  std::string data_host = o.data_host;
  if (data_host.empty()) {
    try {
      data_host = local_address_towards(o.host);
    } catch (const std::exception& e) {
      log(std::string(e.what()) + "; data links bind on 127.0.0.1");
      data_host = "127.0.0.1";
    }
  }
  worker_hosts hosts{sys, data_host, log, o.status};

  stopwatch since_joined;
  double backoff = o.backoff_seconds;
  std::string last_why;
  for (;;) {
    std::string why;
    const auto end = join_once(sys, o, where, identity.get(), hosts, log, why);
    if (end != session_end::unreachable) hosts.end_all("the session with " + where + " ended");
    if (o.status) o.status->joined = false;
    if (o.status && end == session_end::lost) ++o.status->losses;
    switch (end) {
      case session_end::bye:
        log("the run at " + where + " is over; exiting");
        return 0;
      case session_end::refused:
        log("refused by " + where + ": " + why);
        return 2;
      case session_end::lost:
        log("lost the control process at " + where + " (" + why + "); rejoining");
        since_joined.reset();
        backoff = o.backoff_seconds;
        continue;
      case session_end::stopped:
        log("stopping on a signal: left the run at " + where);
        return 0;
      case session_end::unreachable:
        break;
    }
    if (stopping(o)) {
      log("stopping on a signal before joining " + where);
      return 0;
    }
    if (why != last_why) log("cannot join " + where + " yet: " + why + "; retrying");
    last_why = why;
    if (since_joined.seconds() + backoff > o.join_timeout_seconds) {
      log("gave up: no join to " + where + " within " +
          std::to_string(static_cast<int>(o.join_timeout_seconds)) + " s (" + why + ")");
      return 1;
    }
    for (stopwatch slept; slept.seconds() < backoff && !stopping(o);)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    backoff = std::min(2.0, backoff * 2);
  }
}

}  // namespace troupe::actors
