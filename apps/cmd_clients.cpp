// The service's clients: `troupe submit | status | logs | cancel | inject | agents`. Each is one
// or a few calls of the HTTP API (docs/API.md) through apps/api_client.hpp; they hold no state.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "apps/api_client.hpp"
#include "apps/args.hpp"
#include "apps/command.hpp"

namespace troupe::apps {
namespace {

using json = nlohmann::json;

// A job id or agent name as the service makes them (letters, digits, `_`, `.`, `-`); anything
// else never reaches a URL.
std::string checked_name(const std::string& text, const std::string& what) {
  if (text.empty() || text.size() > 200 ||
      text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") !=
          std::string::npos)
    throw input_error("'" + text.substr(0, 60) + "' is not " + what);
  return text;
}

std::string job_id(const args& a, const char* usage) {
  if (a.positionals().empty())
    throw input_error(std::string("expected a JOB id (usage: ") + usage + ")");
  return checked_name(a.positionals()[0], "a job id (NAME-SEQ, as submit printed)");
}

std::string text_of(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

// The final state of a job, polled every 0.5 s; the service answers each poll with a deadline.
std::string wait_for_end(const api_client& api, const std::string& id) {
  for (;;) {
    const auto j = api.get("/api/v1/jobs/" + id);
    const auto state = text_of(j, "state");
    if (state == "completed" || state == "failed" || state == "cancelled" || state == "interrupted")
      return state;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

const char* server_help =
    "  --server URL   the service's HTTP API (TROUPE_SERVER; default https://127.0.0.1:7080)\n"
    "  --token T      the cluster's token (TROUPE_TOKEN; else STATE/token)\n"
    "  --ca FILE      the cluster CA's certificate (TROUPE_CA; else STATE/tls/ca.crt)\n"
    "  --state DIR    the service's state directory on this machine (TROUPE_STATE;\n"
    "                 default ./troupe-state)\n\n"
    "exit: 0 done, 2 refused by the service (bad file, unknown job), 1 the service is\n"
    "unreachable or failed";

// An action on the service (cancel, inject, drain): POST `body` to `path`, then say what was
// done, `said`.
int act(const args& a, const std::string& path, const json& body, const std::string& said) {
  api_client(a).post(path, body);
  std::printf("%s\n", said.c_str());
  return exit_ok;
}

// A client command: its own usage lines, then the flags every client shares.
command_registrar client_command(const char* name, const char* summary, const char* usage,
                                 int (*run)(const std::vector<std::string>&),
                                 const flag_set& flags) {
  return command_registrar{{name, summary, std::string(usage) + "\n" + server_help, run, flags}};
}

const flag_set submit_flags = client_flags({"wait"}, {"set"});

int submit(const std::vector<std::string>& argv) {
  const args a(argv, submit_flags);
  if (a.positionals().size() != 1)
    throw input_error(
        "expected one FILE.yaml (usage: troupe submit FILE.yaml [--set PATH=VALUE ...] [--wait])");
  const auto& file = a.positionals()[0];
  std::ifstream in(file, std::ios::binary);
  if (!in) throw input_error(file + ": cannot read it");
  std::ostringstream text;
  text << in.rdbuf();
  // The file travels as a JSON string, which must be UTF-8: a file that is not is named here,
  // before anything is sent (exit 2, as for any bad input).
  try {
    (void)nlohmann::json(text.str()).dump();
  } catch (const nlohmann::json::type_error& e) {
    const std::string why = e.what();
    const auto at = why.find("] ");
    throw input_error(file + ": not UTF-8 text (" +
                      (at == std::string::npos ? why : why.substr(at + 2)) + ")");
  }
  const api_client api(a);
  const auto answer =
      api.post("/api/v1/jobs", {{"file", file}, {"yaml", text.str()}, {"set", a.all("set")}});
  std::vector<std::string> ids;
  for (const auto& j : answer.at("jobs")) {
    ids.push_back(text_of(j, "id"));
    std::printf("%s\n", ids.back().c_str());
  }
  std::fflush(stdout);
  if (!a.has("wait")) return exit_ok;
  int code = exit_ok;
  for (const auto& id : ids) {
    const auto state = wait_for_end(api, id);
    std::printf("%s: %s\n", id.c_str(), state.c_str());
    if (state != "completed") code = exit_failed;
  }
  return code;
}
const command_registrar reg_submit = client_command(
    "submit", "submit a jobs-only YAML file to a running troupe serve; prints the job ids",
    "usage: troupe submit FILE.yaml [--set PATH=VALUE ...] [--wait] [--server URL]\n\n"
    "  --set PATH=VALUE  override a key of the file (jobs.0.epochs=1); repeatable\n"
    "  --wait            wait until the jobs end (exit 1 unless all completed)\n",
    submit, submit_flags);

const flag_set status_flags = client_flags({"json"});

int status(const std::vector<std::string>& argv) {
  const args a(argv, status_flags);
  const api_client api(a);
  if (!a.positionals().empty()) {
    const auto j = api.get("/api/v1/jobs/" + job_id(a, "troupe status [JOB] [--json]"));
    if (a.has("json")) {
      std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
      return exit_ok;
    }
    std::printf("%s  %s  priority %s  starts %s%s%s\n", text_of(j, "id").c_str(),
                text_of(j, "state").c_str(), text_of(j, "priority").c_str(),
                text_of(j, "starts").c_str(),
                j.contains("step") ? ("  step " + text_of(j, "step")).c_str() : "",
                text_of(j, "reason").empty() ? "" : ("  (" + text_of(j, "reason") + ")").c_str());
    for (const auto& e : j.at("history"))
      std::printf("  %-12s %s\n", text_of(e, "event").c_str(), text_of(e, "detail").c_str());
    if (j.contains("report")) {
      const auto& r = j["report"];
      std::printf("  report: steps %s  lost_steps %s  test_accuracy %s\n",
                  text_of(r, "steps").c_str(),
                  text_of(r.value("faults", json::object()), "lost_steps").c_str(),
                  text_of(r, "test_accuracy").c_str());
    }
    return exit_ok;
  }
  const auto j = api.get("/api/v1/jobs");
  if (a.has("json")) {
    std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return exit_ok;
  }
  std::printf("%-24s %-10s %8s %8s  %s\n", "JOB", "STATE", "PRIORITY", "STEP", "WHY");
  for (const auto& job : j.at("jobs"))
    std::printf("%-24s %-10s %8s %8s  %s\n", text_of(job, "id").c_str(),
                text_of(job, "state").c_str(), text_of(job, "priority").c_str(),
                text_of(job, "step").c_str(), text_of(job, "reason").c_str());
  return exit_ok;
}
const command_registrar reg_status = client_command(
    "status", "the service's jobs (queued in start order), or one job with its history",
    "usage: troupe status [JOB] [--json] [--server URL]\n", status, status_flags);

const flag_set logs_flags = client_flags({"follow"});

int logs(const std::vector<std::string>& argv) {
  const args a(argv, logs_flags);
  const auto id = job_id(a, "troupe logs JOB [--follow]");
  const api_client api(a);
  std::uint64_t offset = 0;
  for (;;) {
    const auto chunk = api.get("/api/v1/jobs/" + id + "/logs?offset=" + std::to_string(offset));
    const auto text = text_of(chunk, "text");
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    offset = chunk.at("offset").get<std::uint64_t>();
    if (!text.empty()) continue;  // more may be waiting
    if (!a.has("follow") || chunk.at("ended").get<bool>()) return exit_ok;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
}
const command_registrar reg_logs =
    client_command("logs", "a job's log; --follow streams it until the job ends",
                   "usage: troupe logs JOB [--follow] [--server URL]\n", logs, logs_flags);

const flag_set cancel_flags = client_flags();

int cancel(const std::vector<std::string>& argv) {
  const args a(argv, cancel_flags);
  const auto id = job_id(a, "troupe cancel JOB");
  return act(a, "/api/v1/jobs/" + id + "/cancel", json::object(), id + ": cancelling");
}
const command_registrar reg_cancel =
    client_command("cancel", "cancel a job (a running one at its next step boundary)",
                   "usage: troupe cancel JOB [--server URL]\n", cancel, cancel_flags);

const flag_set inject_flags = client_flags();

int inject(const std::vector<std::string>& argv) {
  const args a(argv, inject_flags);
  if (a.positionals().size() != 2)
    throw input_error("expected a JOB and a SPEC (usage: troupe inject JOB SPEC, e.g. kill:cpu/1)");
  const auto id = job_id(a, "troupe inject JOB SPEC");
  const auto& spec = a.positionals()[1];
  return act(a, "/api/v1/jobs/" + id + "/inject", {{"spec", spec}}, id + ": injected " + spec);
}
const command_registrar reg_inject = client_command(
    "inject", "inject a fault into a running job (kill:cpu/1, hang:..., drop:..., partition:...)",
    "usage: troupe inject JOB SPEC [--server URL]\n\n"
    "SPEC is the grammar of troupe run --inject; without @STEP it fires at the next step.\n",
    inject, inject_flags);

const flag_set agents_flags = client_flags({"json"});

int agents(const std::vector<std::string>& argv) {
  const args a(argv, agents_flags);
  const auto j = api_client(a).get("/api/v1/agents");
  if (a.has("json")) {
    std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return exit_ok;
  }
  std::printf("%-16s %-10s %-8s %5s %-8s %s\n", "AGENT", "GROUP", "DEVICE", "COUNT", "HEALTH",
              "HOST");
  for (const auto& ag : j.at("agents"))
    std::printf(
        "%-16s %-10s %-8s %5s %-8s %s%s\n", text_of(ag, "name").c_str(),
        text_of(ag, "group").c_str(), text_of(ag, "device").c_str(), text_of(ag, "count").c_str(),
        text_of(ag, "health").c_str(), text_of(ag, "host").c_str(),
        ag.contains("lost_reason") ? ("  (" + text_of(ag, "lost_reason") + ")").c_str() : "");
  return exit_ok;
}
const command_registrar reg_agents =
    client_command("agents", "the agents that joined the service: group, devices, health",
                   "usage: troupe agents [--json] [--server URL]\n", agents, agents_flags);

const flag_set drain_flags = client_flags();

int drain(const std::vector<std::string>& argv) {
  const args a(argv, drain_flags);
  if (a.positionals().size() != 1)
    throw input_error(
        "expected one AGENT name (usage: troupe drain AGENT; troupe agents lists them)");
  const auto name = checked_name(a.positionals()[0], "an agent name (troupe agents lists them)");
  return act(a, "/api/v1/agents/" + name + "/drain", json::object(), name + ": drained");
}
const command_registrar reg_drain =
    client_command("drain", "drain an agent: its work moves to the other agents, then it exits 0",
                   "usage: troupe drain AGENT [--server URL]\n", drain, drain_flags);

}  // namespace
}  // namespace troupe::apps
