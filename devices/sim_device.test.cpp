// The sim device's contracts that do not depend on the host's speed: refusals, the factory,
// the share group's mutual exclusion and the gate's deadline. How a call is stretched is
// measured against real clocks in sim_device_timing.test.cpp (`make bench`).
#include "devices/sim_device.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "devices/cpu_device.hpp"
#include "devices/share_gate.hpp"
#include "devices/sim_device_testing.hpp"

using namespace troupe;
using namespace troupe::devices;
using namespace troupe::devices::testing;

TEST_CASE("slowdown below 1 is refused with the device name") {
  auto base = std::make_unique<cpu_device>("x/base", 1);
  try {
    sim_device d("x", std::move(base), 0.5);
    FAIL("expected an error");
  } catch (const input_error& e) {
    CHECK(std::string(e.what()).find("'x'") != std::string::npos);
  }
  sim_device ok("y", std::make_unique<cpu_device>("y/base", 1), 2.0);
  CHECK_THROWS_AS(ok.set_slowdown(0.9), input_error);
  ok.set_slowdown(4.0);
  CHECK(ok.slowdown() == 4.0);
}

TEST_CASE("make_device builds cpu and sim and rejects cuda without a backend") {
  device_spec cpu;
  cpu.name = "c0";
  CHECK(make_device(cpu)->kind() == device_kind::cpu);
  device_spec sim;
  sim.kind = device_kind::sim;
  sim.name = "s0";
  sim.slowdown = 2.0;
  auto s = make_device(sim);
  CHECK(s->kind() == device_kind::sim);
  CHECK(s->capability() == doctest::Approx(0.5));
  device_spec gpu;
  gpu.kind = device_kind::cuda;
  gpu.name = "g0";
  CHECK_THROWS_AS(make_device(gpu), input_error);
  CHECK_THROWS_AS(parse_device_kind("tpu"), input_error);
  CHECK(parse_device_kind("sim") == device_kind::sim);
}

TEST_CASE("devices in one share group never compute at the same time") {
  std::atomic<int> inside{0}, overlaps{0};
  auto idle = [&](std::chrono::duration<double>) {
    if (inside.fetch_add(1) != 0) overlaps++;
    std::this_thread::yield();
    inside.fetch_sub(1);
  };
  sim_device a("a", std::make_unique<cpu_device>("a/base", 1), 2.0, "gpu0-test", idle);
  sim_device b("b", std::make_unique<cpu_device>("b/base", 1), 2.0, "gpu0-test", idle);
  a.set_share("job-a", 3.0);
  b.set_share("job-b", 1.0);
  auto worker = [](sim_device& d) {
    busy_model m;
    std::vector<float> p(4), g(4);
    models::batch bt;
    bt.size = 1;
    for (int i = 0; i < 30; ++i) d.run_step(m, p.data(), bt, g.data(), nullptr);
  };
  std::thread ta(worker, std::ref(a)), tb(worker, std::ref(b));
  ta.join();
  tb.join();
  CHECK(overlaps.load() == 0);
  auto gate = share_gate::named("gpu0-test");
  CHECK(gate->used_seconds("job-a") > 0.0);
  CHECK(gate->used_seconds("job-b") > 0.0);
}

TEST_CASE("a share gate wait has a deadline and names the holder") {
  share_gate gate("g");
  gate.acquire("holder");
  try {
    gate.acquire("late", std::chrono::milliseconds(20));
    FAIL("expected a deadline error");
  } catch (const runtime_failure& e) {
    const std::string what = e.what();
    CHECK(what.find("holder") != std::string::npos);
    CHECK(what.find("'g'") != std::string::npos);
  }
  gate.release("holder", 0.01);
  CHECK(gate.acquire("late", std::chrono::milliseconds(1000)) >= 0.0);
  gate.release("late", 0.0);
}
