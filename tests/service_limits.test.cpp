// `troupe serve` against hostile clients: slow ones that trickle a request byte by byte (they
// must not stop probes and the API, and are cut at the request deadline), a crowd of idle
// connections (the listen backlog takes them at once), and a chunked body over the size limit
// (refused with 413, nothing stored, however the body arrives).
#include <doctest/doctest.h>
#include <httplib.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "tests/service_support.hpp"
#include "tests/tls_support.hpp"

using namespace troupe::testing;

TEST_CASE("slow clients: with 8 and 64 trickling, probes and the API answer; they are cut") {
  service svc("slow");
  svc.start();
  auto client = svc.http_client();
  // Each answer well inside the time a held connection would block it (the request deadline).
  client->set_connection_timeout(5, 0);
  client->set_read_timeout(5, 0);
  std::vector<std::unique_ptr<slow_tls_client>> slow;
  for (const std::size_t n : {8, 64}) {
    CAPTURE(n);
    while (slow.size() < n)
      slow.push_back(std::make_unique<slow_tls_client>(svc.http_port(), std::chrono::seconds(2)));
    for (const auto& s : slow) REQUIRE(s->connected());
    // Every one of them holds a worker thread by now.
    std::this_thread::sleep_for(std::chrono::seconds(2));
    const auto health = client->Get("/healthz");
    REQUIRE(health);
    CHECK(health->status == 200);
    const auto jobs = client->Get("/api/v1/jobs");
    REQUIRE(jobs);
    CHECK(jobs->status == 200);
  }
  // The request deadline (10 s for the headers) cuts every one of them; 40 s is a bound, not
  // the figure.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(40);
  std::size_t cut = 0;
  while (std::chrono::steady_clock::now() < until) {
    cut = 0;
    for (const auto& s : slow) cut += s->cut() ? 1 : 0;
    if (cut == slow.size()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  CHECK(cut == slow.size());
}

TEST_CASE("200 idle connections are queued at once, and the service still answers") {
  service svc("crowd");
  svc.start();
  std::vector<int> held;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 200; ++i) {
    const int fd = connect_loopback(svc.http_port());
    REQUIRE(fd >= 0);
    held.push_back(fd);
  }
  // connect(2) returns once the kernel queued the connection: a backlog of 5 made the 200th
  // wait for the SYN retries (67 s were measured); this bounds it far above what it takes.
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20));
  auto client = svc.http_client();
  client->set_connection_timeout(30, 0);
  client->set_read_timeout(30, 0);
  const auto health = client->Get("/healthz");
  REQUIRE(health);
  CHECK(health->status == 200);
  for (int fd : held) ::close(fd);
}

TEST_CASE("a chunked body over the limit is refused with 413 and nothing is stored") {
  service svc("chunked");
  svc.start();
  auto client = svc.http_client();
  // 2 MiB in chunks of 64 KiB, no Content-Length: the 1 MiB limit must hold all the same.
  const std::string chunk(64 << 10, ' ');
  int sent = 0;
  const auto r = client->Post(
      "/api/v1/jobs",
      [&](std::size_t, httplib::DataSink& sink) {
        if (sent++ < 32)
          sink.write(chunk.data(), chunk.size());
        else
          sink.done();
        return true;
      },
      "application/json");
  // The service reads the rest and drops it (up to 16 times the limit), so the client gets the
  // answer rather than a closed connection.
  REQUIRE(r);
  CHECK(r->status == 413);
  CHECK(r->body.find("over the limit") != std::string::npos);
  CHECK(svc.status().at("jobs").empty());
  // A small chunked submission still works.
  auto again = svc.http_client();
  bool once = false;
  const std::string body =
      R"({"yaml": "jobs:\n  - name: tiny\n    resources: [s1]\n    model: {kind: softmax}\n    data: {dataset: synthetic}\n    max_steps: 2\n"})";
  const auto ok = again->Post(
      "/api/v1/jobs",
      [&](std::size_t, httplib::DataSink& sink) {
        if (!once) sink.write(body.data(), body.size());
        if (once) sink.done();
        once = true;
        return true;
      },
      "application/json");
  REQUIRE(ok);
  CHECK(ok->status == 201);
}
