// How a sim device stretches a call: measured against real clocks (the base device's compute
// is real), so these run with `make bench`, not in the default suite.
// ctest-label: perf
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

TEST_CASE("sim stretches compute by the slowdown and forwards the base device's results") {
  std::vector<double> idles;
  sim_device d("slow", std::make_unique<cpu_device>("slow/base", 1), 3.0, "", record_into(idles));
  busy_model m;
  std::vector<float> p(4), g(4, -1.0f);
  models::batch b;
  b.size = 7;
  step_timing t;
  auto stats = d.run_step(m, p.data(), b, g.data(), &t);
  CHECK(stats.samples == 7);
  CHECK(g[0] == 7.0f);
  REQUIRE(idles.size() == 1);
  // The idle stretch is twice the real compute for slowdown 3. The recorder spends no time, so
  // the measured compute time is the real compute alone.
  CHECK(idles[0] > 0.0);
  CHECK(idles[0] == doctest::Approx(2.0 * t.compute_seconds).epsilon(0.1));
  CHECK(d.capability() == doctest::Approx(1.0 / 3.0));
  auto ev = d.run_eval(m, p.data(), b, &t);
  CHECK(ev.correct == 7);
  CHECK(idles.size() == 2);
}

TEST_CASE("with a cpu clock, the call lasts slowdown x the thread's own compute time") {
  // The fake CPU clock says the compute used 10 ms of CPU, whatever the wall clock saw: a
  // slowdown-3 device then occupies 30 ms in all, the stretch making up the rest.
  std::vector<double> idles;
  double cpu_now = 1.0;
  sim_device d("slow", std::make_unique<cpu_device>("slow/base", 1), 3.0, "", record_into(idles),
               [&] {
                 const double t = cpu_now;
                 cpu_now += 0.010;
                 return t;
               });
  call c(3);
  c.step(d);
  REQUIRE(idles.size() == 1);
  // The recorder spends no time, so compute_seconds is the wall time of the real compute.
  CHECK(idles[0] == doctest::Approx(0.030 - c.t.compute_seconds).epsilon(0.01));
  CHECK(c.t.compute_seconds < 0.030);
}

TEST_CASE("a train step owes the median cost of the recent steps, not its own spike") {
  // Fake CPU costs per call: 10 ms four times, then a 40 ms spike (a cold cache, a busy
  // sibling), then 10 ms again, all for the same 3 rows. At slowdown 3 every call owes 30 ms:
  // the spike is not multiplied by the slowdown.
  std::vector<double> idles;
  const std::vector<double> costs = {0.010, 0.010, 0.010, 0.010, 0.040, 0.010, 0.020};
  sim_device d("slow", std::make_unique<cpu_device>("slow/base", 1), 3.0, "", record_into(idles),
               costs_clock(costs));
  call c(3);
  double wall_sum = 0.0;
  for (std::size_t i = 0; i + 1 < costs.size(); ++i) {
    c.step(d);
    wall_sum += c.t.compute_seconds;  // the recorder does not wait: the real compute's wall time
  }
  REQUIRE(idles.size() == costs.size() - 1);
  CHECK(idles[4] == doctest::Approx(0.030).epsilon(0.05));  // not 0.120
  CHECK(idles[5] == doctest::Approx(0.030).epsilon(0.05));
  CHECK(wall_sum < 0.015);

  // An eval call owes its own cost (20 ms), not the train steps' median.
  idles.clear();
  c.eval(d);
  REQUIRE(idles.size() == 1);
  CHECK(idles[0] == doctest::Approx(0.060).epsilon(0.05));
}

TEST_CASE("a start lag (the step was ready before the call) is part of the stretch") {
  // 10 ms of CPU on the fake clock at slowdown 3: 30 ms in all. The step had been ready 8 ms
  // before the call, so 8 ms less idle, and the reported compute time counts from readiness.
  std::vector<double> idles;
  sim_device d("slow", std::make_unique<cpu_device>("slow/base", 1), 3.0, "", record_into(idles),
               costs_clock({0.010}));
  call c(3);
  std::vector<float> rows(3);
  c.b.x = rows.data();
  c.t.start_lag_seconds = 0.008;
  c.step(d);
  REQUIRE(idles.size() == 1);
  CHECK(idles[0] == doctest::Approx(0.030 - 0.008).epsilon(0.05));
  CHECK(c.t.compute_seconds >= 0.008);
  CHECK(c.t.compute_seconds < 0.008 + 0.005);  // the recorder does not wait: lag + real time

  // A lag longer than the whole stretch leaves nothing to idle.
  idles.clear();
  c.t.start_lag_seconds = 0.050;
  c.step(d);
  CHECK(idles.empty());
}

TEST_CASE("with row_seconds a train step owes slowdown x row_seconds x rows, whatever it cost") {
  // A device of fixed speed: 0.5 ms per sample at slowdown 4 is 2 ms per sample. The fake CPU
  // costs (1 ms, then 9 ms) move nothing while the real compute fits; eval keeps its own cost.
  std::vector<double> idles;
  sim_device d("fixed", std::make_unique<cpu_device>("fixed/base", 1), 4.0, "", record_into(idles),
               costs_clock({0.001, 0.009, 0.002}));
  d.set_row_seconds(0.0005);
  call c(10);
  c.step(d);
  c.step(d);
  REQUIRE(idles.size() == 2);
  // 20 ms owed, less the real compute's wall time (the recorder does not wait).
  CHECK(idles[0] == doctest::Approx(0.020).epsilon(0.15));
  CHECK(idles[1] == doctest::Approx(0.020).epsilon(0.15));
  c.eval(d);
  REQUIRE(idles.size() == 3);
  CHECK(idles[2] == doctest::Approx(4 * 0.002).epsilon(0.15));  // its own 2 ms, stretched

  // A slow fault still multiplies the fixed speed.
  idles.clear();
  d.set_slowdown(12.0);
  c.step(d);
  REQUIRE(idles.size() == 1);
  CHECK(idles[0] == doctest::Approx(0.060).epsilon(0.1));
  CHECK_THROWS_AS(d.set_row_seconds(-1.0), input_error);
}

TEST_CASE("an idle that keeps oversleeping is asked for that much less") {
  // The idle sleeps 1 ms past what it is asked for (a late wake-up). 2 ms of fake CPU at
  // slowdown 3 owe 6 ms of stretch per call; after a few calls the ask is about 1 ms shorter,
  // never more than the 2 ms cap (and some wall-time noise).
  std::vector<double> asked;
  sim_device d(
      "slow", std::make_unique<cpu_device>("slow/base", 1), 3.0, "",
      [&](std::chrono::duration<double> s) {
        asked.push_back(s.count());
        std::this_thread::sleep_for(s + std::chrono::milliseconds(1));
      },
      costs_clock({0.002}));
  busy_model m;
  std::vector<float> p(4), g(4);
  models::batch b;
  b.size = 3;
  for (int i = 0; i < 12; ++i) d.run_step(m, p.data(), b, g.data(), nullptr);
  REQUIRE(asked.size() == 12);
  CHECK(asked.front() > 0.004);  // 6 ms less the real compute's wall time
  CHECK(asked.back() < asked.front() - 0.0006);
  CHECK(asked.back() > asked.front() - 0.003);
}

TEST_CASE("a thread held up after its compute still ends the call on time") {
  // The fake CPU clock's second read in a call (right after the compute) stalls 6 ms, as a
  // thread preempted there would. 10 ms of CPU at slowdown 3 owe 30 ms: the idle is what is left
  // after the stall, not 30 ms less the compute alone, so the call is not 6 ms late.
  std::vector<double> idles;
  int reads = 0;
  double cpu_now = 1.0;
  sim_device d("slow", std::make_unique<cpu_device>("slow/base", 1), 3.0, "", record_into(idles),
               [&] {
                 if (++reads % 2 == 0) {
                   std::this_thread::sleep_for(std::chrono::milliseconds(6));
                   cpu_now += 0.010;
                 }
                 return cpu_now;
               });
  call c(3);
  c.step(d);
  REQUIRE(idles.size() == 1);
  CHECK(idles[0] < 0.030 - 0.006 + 0.0005);
  CHECK(idles[0] + c.t.compute_seconds == doctest::Approx(0.030).epsilon(0.05));
}
