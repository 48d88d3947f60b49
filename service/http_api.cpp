#include "service/http_api.hpp"

#include <httplib.h>

#include <algorithm>
#include <initializer_list>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/launcher_env.hpp"
#include "core/request_deadlines.hpp"
#include "service/api_backend.hpp"
#include "service/dashboard_assets.hpp"

namespace troupe::service {
namespace {

// The API's pool: slow clients (each cut at its request deadline) leave room for probes and
// operators; an idle thread costs a stack's address space, not memory.
constexpr std::size_t api_threads = 128;

using json = nlohmann::json;

void reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  // Text from the request (a path, a name) may be any bytes: invalid UTF-8 is replaced rather
  // than thrown past the server (which would end the process).
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void fail(httplib::Response& res, int status, const std::string& error) {
  reply(res, status, {{"error", error}});
}

// Runs a handler, mapping the runtime's exceptions onto status codes.
template <class F>
httplib::Server::Handler guarded(F f) {
  return [f](const httplib::Request& req, httplib::Response& res) {
    try {
      f(req, res);
    } catch (const not_found& e) {
      fail(res, 404, e.what());
    } catch (const input_error& e) {
      fail(res, 400, e.what());
    } catch (const runtime_failure& e) {
      fail(res, 503, e.what());
    } catch (const std::exception& e) {
      fail(res, 500, e.what());
    }
  };
}

// The request's JSON body, which must be an object of `fields` at most: a field the endpoint
// does not know (a typo, a client of another version) is refused, naming it, rather than
// ignored. An empty body counts as {} where `empty_ok`.
json body_of(const std::string& text, std::initializer_list<const char*> fields,
             bool empty_ok = false) {
  if (empty_ok && text.find_first_not_of(" \t\r\n") == std::string::npos) return json::object();
  auto body = json::parse(text, nullptr, false);
  if (body.is_discarded() || !body.is_object())
    throw input_error("the request body must be a JSON object");
  for (const auto& item : body.items()) {
    const std::string& key = item.key();
    if (std::find_if(fields.begin(), fields.end(), [&](const char* f) { return key == f; }) !=
        fields.end())
      continue;
    std::string known;
    for (const char* f : fields) known += std::string(known.empty() ? "" : ", ") + f;
    throw input_error("unknown field '" + key.substr(0, 100) + "' (" +
                      (known.empty() ? std::string("this request takes none") : "known: " + known) +
                      ")");
  }
  return body;
}

// A POST handler that gets the body as read: counted as it arrives, with Content-Length or
// chunked, and refused with 413 past `limit` bytes. cpp-httplib 0.11 checks its own payload limit
// against Content-Length only, so a chunked body of any size would reach the handler. The
// connection closes after a refusal.
template <class F>
httplib::Server::HandlerWithContentReader with_body(std::size_t limit, F f) {
  const auto handler = guarded(f);
  return [=](const httplib::Request& req, httplib::Response& res,
             const httplib::ContentReader& reader) {
    std::string body;
    // httplib itself refuses (and reads past) a Content-Length over the limit: the reader then
    // fails without calling us. A chunked body is counted here; past the limit the rest is read
    // and dropped, up to 16 times the limit, so that a client still sending gets the 413.
    bool over = req.has_header("Content-Length") &&
                req.get_header_value<std::uint64_t>("Content-Length") > limit;
    std::size_t dropped = 0;
    const bool read = reader([&](const char* data, std::size_t n) {
      if (!over && body.size() + n <= limit) {
        body.append(data, n);
        return true;
      }
      over = true;
      body.clear();
      dropped += n;
      return dropped <= 16 * limit;
    });
    if (over || !read) res.set_header("Connection", "close");
    if (over)
      return fail(res, 413,
                  "the request body is over the limit of " + std::to_string(limit) + " bytes");
    if (!read) return fail(res, 400, "the request body could not be read");
    httplib::Request with = req;
    with.body = std::move(body);
    // The body is in: the handler may take its time (a drain waits for a step boundary).
    deadline_pool::handler_started();
    handler(with, res);
  };
}

std::string string_field(const json& body, const char* key, bool required) {
  const auto it = body.find(key);
  if (it == body.end()) {
    if (required) throw input_error(std::string("the request needs a string '") + key + "'");
    return "";
  }
  if (!it->is_string()) throw input_error(std::string("'") + key + "' must be a string");
  return it->get<std::string>();
}

}  // namespace

void add_api_routes(httplib::Server& srv, api_backend& service, const http_options& options) {
  srv.set_payload_max_length(options.max_body_bytes);
  const std::string id = "([A-Za-z0-9_.-]{1,200})";

  // The dashboard: its files are in the binary (service/dashboard_assets.hpp).
  srv.Get(R"(/|/[a-z.]+\.(html|js))", [](const httplib::Request& req, httplib::Response& res) {
    const auto* a = dashboard_asset(req.path);
    if (!a) return fail(res, 404, "no such file: " + req.path);
    res.set_content(reinterpret_cast<const char*>(a->data), a->size, a->content_type);
  });
  srv.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    reply(res, 200, {{"status", "alive"}});
  });
  srv.Get("/readyz", [&service](const httplib::Request&, httplib::Response& res) {
    if (service.ready())
      reply(res, 200, {{"status", "ready"}});
    else
      reply(res, 503, {{"status", "stopping"}, {"error", "the service is stopping"}});
  });
  srv.Get("/metrics", guarded([&service](const httplib::Request&, httplib::Response& res) {
            res.set_content(service.metrics(), "text/plain; version=0.0.4; charset=utf-8");
          }));
  const auto limit = options.max_body_bytes;
  srv.Post("/api/v1/jobs",
           with_body(limit, [&service](const httplib::Request& req, httplib::Response& res) {
             const auto body = body_of(req.body, {"yaml", "file", "set"});
             const auto yaml = string_field(body, "yaml", true);
             auto source = string_field(body, "file", false);
             if (source.empty()) source = "submitted.yaml";
             std::vector<std::string> sets;
             if (const auto s = body.find("set"); s != body.end()) {
               if (!s->is_array()) throw input_error("'set' must be a list of PATH=VALUE strings");
               for (const auto& v : *s) {
                 if (!v.is_string())
                   throw input_error("'set' must be a list of PATH=VALUE strings");
                 sets.push_back(v.get<std::string>());
               }
             }
             reply(res, 201, service.submit(yaml, source, sets));
           }));
  srv.Get("/api/v1/jobs", guarded([&service](const httplib::Request&, httplib::Response& res) {
            reply(res, 200, service.jobs());
          }));
  srv.Get("/api/v1/jobs/" + id,
          guarded([&service](const httplib::Request& req, httplib::Response& res) {
            reply(res, 200, service.job(req.matches[1]));
          }));
  srv.Get("/api/v1/jobs/" + id + "/series",
          guarded([&service](const httplib::Request& req, httplib::Response& res) {
            reply(res, 200, service.series(req.matches[1]));
          }));
  srv.Get("/api/v1/jobs/" + id + "/logs",
          guarded([&service](const httplib::Request& req, httplib::Response& res) {
            std::uint64_t offset = 0;
            if (req.has_param("offset")) {
              const auto text = req.get_param_value("offset");
              std::size_t used = 0;
              try {
                offset = std::stoull(text, &used);
              } catch (const std::exception&) {
                used = 0;
              }
              if (used == 0 || used != text.size())
                throw input_error("offset must be a byte count, got '" + text.substr(0, 40) + "'");
            }
            reply(res, 200, service.logs(req.matches[1], offset, 256 * 1024));
          }));
  srv.Post("/api/v1/jobs/" + id + "/cancel",
           with_body(limit, [&service](const httplib::Request& req, httplib::Response& res) {
             body_of(req.body, {}, true);
             service.cancel(req.matches[1]);
             reply(res, 202, {{"id", req.matches[1]}, {"state", "cancelling"}});
           }));
  srv.Post("/api/v1/jobs/" + id + "/inject",
           with_body(limit, [&service](const httplib::Request& req, httplib::Response& res) {
             const auto spec = string_field(body_of(req.body, {"spec"}), "spec", true);
             service.inject(req.matches[1], spec);
             reply(res, 202, {{"id", req.matches[1]}, {"spec", spec}});
           }));
  srv.Get("/api/v1/agents", guarded([&service](const httplib::Request&, httplib::Response& res) {
            reply(res, 200, service.agents());
          }));
  srv.Post("/api/v1/agents/" + id + "/drain",
           with_body(limit, [&service](const httplib::Request& req, httplib::Response& res) {
             body_of(req.body, {}, true);
             service.drain_agent(req.matches[1]);
             reply(res, 202, {{"agent", req.matches[1]}, {"state", "drained"}});
           }));
  // Unknown routes, and httplib's own refusals (413 for a body over the limit, 400 for a
  // request it cannot parse): JSON with an error field like every other answer.
  srv.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    const std::string what = res.status == 404 ? "no such endpoint: " + req.method + " " + req.path
                             : res.status == 413 ? "the request body is over the limit"
                                                 : "bad request";
    fail(res, res.status, what);
  });
  srv.set_exception_handler([](const httplib::Request&, httplib::Response& res,
                               std::exception_ptr) { fail(res, 500, "internal error"); });
}

bool api_open_path(const std::string& path) {
  return path == "/healthz" || path == "/readyz" || path == "/" ||
         (path.find('/', 1) == std::string::npos &&
          (path.size() > 3 &&
           (path.compare(path.size() - 3, 3, ".js") == 0 ||
            (path.size() > 5 && path.compare(path.size() - 5, 5, ".html") == 0))));
}

http_api::http_api(api_backend& service, http_options options)
    : http_(
          [&] {
            if (!options.security.open_path) options.security.open_path = api_open_path;
            return options.security;
          }(),
          api_threads) {
  add_api_routes(http_.server(), service, options);
  http_.start(options.address, "--http");
}

}  // namespace troupe::service
