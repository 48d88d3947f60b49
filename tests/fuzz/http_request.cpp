// Fuzz target: the HTTP API (service/http_api.hpp) on the bytes a client sends: cpp-httplib's
// request parsing in front of our routes, through the server's own per-connection entry point
// (Server::process_request) over a stream in memory. Up to four requests are read from one
// input, as a keep-alive connection would send them. The backend is a fake that answers every
// call with a small fixed JSON, so that the routes, their parameter checks and the JSON bodies
// are what is tested, not a control plane.
//
// Any request must get an answer: a crash, an exception out of process_request, a sanitizer
// report or a hang is a bug. cpp-httplib is Debian's shared library, built without coverage
// instrumentation: the fuzzer sees our handlers and nlohmann::json but not httplib's parser.
#include <httplib.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "service/api_backend.hpp"
#include "service/http_api.hpp"
#include "tests/fuzz/fuzz_target.hpp"

namespace {

using nlohmann::json;

class fixed_backend final : public troupe::service::api_backend {
 public:
  json submit(const std::string&, const std::string&, const std::vector<std::string>&) override {
    return {{"jobs", {{{"id", "mlp-1"}, {"name", "mlp"}, {"priority", 0}, {"state", "queued"}}}}};
  }
  json jobs() const override { return {{"jobs", json::array()}}; }
  json job(const std::string& id) const override { return {{"id", id}, {"state", "running"}}; }
  json series(const std::string&) const override {
    return {{"series", json::object()}, {"events", json::array()}};
  }
  json logs(const std::string& id, std::uint64_t offset, std::size_t) const override {
    return {{"id", id}, {"text", ""}, {"offset", offset}, {"ended", false}};
  }
  json agents() const override { return {{"agents", json::array()}}; }
  std::string metrics() const override { return "# TYPE troupe_jobs gauge\ntroupe_jobs 0\n"; }
  void cancel(const std::string&) override {}
  void inject(const std::string&, const std::string&) override {}
  void drain_agent(const std::string&) override {}
  bool ready() const override { return true; }
};

// One connection's bytes: reads come from the input, writes (the answers) are counted and
// dropped.
class memory_stream final : public httplib::Stream {
 public:
  memory_stream(const char* data, std::size_t size) : data_(data), left_(size) {}

  bool is_readable() const override { return true; }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, std::size_t size) override {
    const std::size_t n = std::min(size, left_);
    if (n > 0) std::memcpy(ptr, data_, n);
    data_ += n;
    left_ -= n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char*, std::size_t size) override {
    written_ += size;
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 40000;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 7080;
  }
  socket_t socket() const override { return INVALID_SOCKET; }

  std::size_t left() const { return left_; }
  std::size_t written() const { return written_; }

 private:
  const char* data_;
  std::size_t left_;
  std::size_t written_ = 0;
};

// The API's routes on a server that is never bound: process_request is protected.
class harness_server final : public httplib::Server {
 public:
  harness_server() {
    // A small body limit, so that committed inputs can pass it with Content-Length and chunked.
    troupe::service::http_options options;
    options.max_body_bytes = 4096;
    troupe::service::add_api_routes(*this, backend_, options);
  }
  bool serve_one(httplib::Stream& stream, bool last, bool& closed) {
    return process_request(stream, last, closed, [](httplib::Request&) {});
  }

 private:
  fixed_backend backend_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Built once: the routes' regular expressions are compiled when they are added.
  static harness_server* server = new harness_server;
  memory_stream stream(reinterpret_cast<const char*>(data), size);
  constexpr int max_requests = 4;
  for (int i = 0; i < max_requests && stream.left() > 0; ++i) {
    bool closed = false;
    const std::size_t before = stream.written();
    // Anything thrown here would end a real server (it escapes httplib's worker thread): the
    // fuzzer reports it as a crash.
    const bool ok = server->serve_one(stream, i + 1 == max_requests, closed);
    // httplib answers a request it read, even one it refuses (400, 404, 413).
    if (ok && stream.written() == before) troupe::fuzz::broken("a request got no answer");
    if (!ok || closed) break;
  }
  return 0;
}
