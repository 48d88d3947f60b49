// http_server's lifecycle: a server dropped right after start() stops (cpp-httplib 0.11 ignores
// a stop() that comes before its listen loop began, which hung a service whose start failed just
// after its API was up), and a taken port is refused.
#include "core/http_server.hpp"

#include <doctest/doctest.h>
#include <httplib.h>

#include <chrono>
#include <future>

#include "core/error.hpp"

TEST_CASE("a server dropped right after start stops, every time") {
  auto dropped = std::async(std::launch::async, [] {
    for (int i = 0; i < 50; ++i) {
      troupe::http_server s;
      s.server().Get("/", [](const httplib::Request&, httplib::Response& res) {
        res.set_content("ok", "text/plain");
      });
      s.start("127.0.0.1:0", "--test");
    }
    return true;
  });
  // Bounded: a hang shows as a failure here, not as a stuck suite.
  REQUIRE(dropped.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
  CHECK(dropped.get());
}

TEST_CASE("a port another server holds is refused, naming the flag and the address") {
  troupe::http_server first;
  first.start("127.0.0.1:0", "--http");
  troupe::http_server second;
  const auto taken = "127.0.0.1:" + std::to_string(first.port());
  try {
    second.start(taken, "--http");
    FAIL("a second server started on " << taken);
  } catch (const troupe::input_error& e) {
    CHECK(std::string(e.what()).find("--http " + taken) != std::string::npos);
  }
}
