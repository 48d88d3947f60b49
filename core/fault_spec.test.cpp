#include "core/fault_spec.hpp"

#include <doctest/doctest.h>

#include <map>
#include <set>

#include "core/error.hpp"
#include "core/testing.hpp"

using troupe::config::fault_config;
using troupe::config::parse_fault;

namespace {

bool same(const fault_config& a, const fault_config& b) {
  return a.step == b.step && a.action == b.action && a.target == b.target && a.factor == b.factor &&
         a.seconds == b.seconds && a.until_step == b.until_step && a.phase == b.phase;
}

std::string error_of(const std::string& spec) {
  return troupe::testing::input_error_of([&] { parse_fault(spec); });
}

}  // namespace

TEST_CASE("parse_fault: every form") {
  struct row {
    const char* spec;
    const char* action;
    const char* target;
    std::int64_t step;
    std::int64_t until;
    double factor;
    double seconds;
  };
  const row table[] = {
      {"kill:cpu/1@50", "kill", "cpu/1", 50, -1, 1.0, 0.0},
      {"kill:gpu-a.2_x/10@0", "kill", "gpu-a.2_x/10", 0, -1, 1.0, 0.0},
      {"hang:cpu/0@10", "hang", "cpu/0", 10, -1, 1.0, 0.0},
      {"hang:cpu/0@10+2.5", "hang", "cpu/0", 10, -1, 1.0, 2.5},
      {"hang:cpu/0@10+0", "hang", "cpu/0", 10, -1, 1.0, 0.0},
      {"slow:cpu/1x3@10-40", "slow", "cpu/1", 10, 40, 3.0, 0.0},
      {"slow:cpu/1x1.5@7-7", "slow", "cpu/1", 7, 7, 1.5, 0.0},
      {"slow:cpu/0x2@100-", "slow", "cpu/0", 100, -1, 2.0, 0.0},
      {"slow:box/1x3@1-2", "slow", "box/1", 1, 2, 3.0, 0.0},  // an 'x' in the group name
      {"delay:cpu/2+200@30", "delay", "cpu/2", 30, 30, 1.0, 0.2},
      {"delay:cpu/2+50@30-35", "delay", "cpu/2", 30, 35, 1.0, 0.05},
      {"delay:cpu/2+0.5@3-", "delay", "cpu/2", 3, -1, 1.0, 0.0005},
      {"drop:sim/0@12", "drop", "sim/0", 12, -1, 1.0, 0.0},
      {"partition:remote@20-30", "partition", "remote", 20, 30, 1.0, 0.0},
      {"partition:remote@20-", "partition", "remote", 20, -1, 1.0, 0.0},
  };
  for (const auto& r : table) {
    CAPTURE(r.spec);
    const fault_config f = parse_fault(r.spec);
    CHECK(name_of(f.action) == std::string(r.action));
    CHECK(f.target == r.target);
    CHECK(f.step == r.step);
    CHECK(f.until_step == r.until);
    CHECK(f.factor == r.factor);
    CHECK(f.seconds == doctest::Approx(r.seconds).epsilon(1e-15));
    // The canonical text reads back as the same struct.
    const std::string canon = troupe::config::fault_to_string(f);
    CAPTURE(canon);
    CHECK(same(parse_fault(canon), f));
  }
  // Canonical spellings of the forms above.
  CHECK(troupe::config::fault_to_string(parse_fault("hang:cpu/0@10+0")) == "hang:cpu/0@10");
  CHECK(troupe::config::fault_to_string(parse_fault("delay:cpu/2+200@30")) == "delay:cpu/2+200@30");
  CHECK(troupe::config::fault_to_string(parse_fault("delay:cpu/2+0.5@3-")) == "delay:cpu/2+0.5@3-");
  CHECK(troupe::config::fault_to_string(parse_fault("slow:cpu/1x1.50@7-7")) ==
        "slow:cpu/1x1.5@7-7");
}

TEST_CASE("parse_fault: a kill's phase") {
  using troupe::fault_phase;
  CHECK(parse_fault("kill:cpu/1@50").phase == fault_phase::compute);
  CHECK(parse_fault("kill:cpu/1@50:reduce").phase == fault_phase::reduce);
  CHECK(parse_fault("kill:cpu/1@50:apply").phase == fault_phase::apply);
  CHECK(parse_fault("kill:cpu/1@80:eval").phase == fault_phase::eval);
  CHECK(troupe::config::fault_to_string(parse_fault("kill:cpu/1@80:eval")) == "kill:cpu/1@80:eval");
  // The default phase is not written; the others read back.
  CHECK(troupe::config::fault_to_string(parse_fault("kill:cpu/1@50:compute")) == "kill:cpu/1@50");
  CHECK(troupe::config::fault_to_string(parse_fault("kill:cpu/1@50:reduce")) ==
        "kill:cpu/1@50:reduce");
  CHECK(same(parse_fault("kill:cpu/1@50:apply"),
             parse_fault(troupe::config::fault_to_string(parse_fault("kill:cpu/1@50:apply")))));
  CHECK(error_of("kill:cpu/1@50:sideways")
            .rfind("--inject 'kill:cpu/1@50:sideways': column 15: expected PHASE (compute, reduce, "
                   "apply or eval) after ':', found 'sideways'",
                   0) == 0);
  CHECK(error_of("kill:cpu/1@50:").find("column 15: expected PHASE") != std::string::npos);
  // Only a kill has one.
  CHECK(error_of("hang:cpu/1@5:reduce").find("column 13: unexpected ':reduce' after the spec") !=
        std::string::npos);
  fault_config f = parse_fault("hang:cpu/1@5");
  f.phase = fault_phase::reduce;
  CHECK_THROWS_AS(troupe::config::fault_to_string(f), troupe::input_error);
}

TEST_CASE("parse_fault: bad forms name the column and the problem") {
  struct row {
    const char* spec;
    int column;
    const char* says;
  };
  const row table[] = {
      {"", 1, "expected ACTION:TARGET"},
      {"kill", 1, "expected ACTION:TARGET"},
      {"kil:cpu/1@5", 1,
       "unknown action 'kil' (expected one of kill, hang, slow, delay, drop, "
       "partition, oom, device-error); did you mean 'kill'?"},
      {"kill:@5", 6, "expected GROUP"},
      {"kill:cpu@5", 9, "'@' cannot follow GROUP 'cpu': expected '/' then INDEX"},
      {"kill:c u/1@5", 7, "' ' cannot follow GROUP 'c'"},
      {"kill:cpu/@5", 10, "expected INDEX (digits), found '@'"},
      {"kill:cpu/1", 11, "expected '@' then STEP, found the end"},
      {"kill:cpu/1@", 12, "expected STEP (digits), found the end"},
      {"kill:cpu/1@-3", 12, "expected STEP (digits), found '-'"},
      {"kill:cpu/1@5-9", 13, "kill fires at one step"},
      {"drop:cpu/1@5-", 13, "drop fires at one step"},
      {"kill:cpu/1@5x", 13, "unexpected 'x' after the spec"},
      {"kill:cpu/1@99999999999999999999", 12, "STEP is too large"},
      {"kill:cpu/123456789@1", 10, "INDEX is too large"},
      {"hang:cpu/1@5+", 14, "expected SECONDS (how long it hangs), found the end"},
      {"hang:cpu/1@5+1.", 16, "expected digits after '.'"},
      {"hang:cpu/1@5+-1", 14, "expected SECONDS"},
      {"slow:cpu/1@10-40", 11, "expected 'x' then FACTOR"},
      {"slow:cpu/1x@10-40", 12, "expected FACTOR (a number >= 1) after 'x'"},
      {"slow:cpu/1x0.5@10-40", 12, "FACTOR must be >= 1"},
      {"slow:cpu/1x3@10", 16, "slow needs a window: @FIRST-LAST, or @FIRST- to the end"},
      {"slow:cpu/1x3@40-10", 17, "LAST step 10 is before FIRST step 40"},
      {"slow:cpu/1x3e2@1-2", 13, "expected '@' then FIRST-LAST steps, found 'e'"},
      {"delay:cpu/1@30", 12, "expected '+' then MS"},
      {"delay:cpu/1+@30", 13, "expected MS (milliseconds of delay)"},
      {"delay:cpu/1+5@", 15, "expected STEP"},
      {"partition:remote/1@2-3", 17, "'/' cannot follow GROUP 'remote': expected '@'"},
      {"partition:remote@2", 19, "partition needs a window"},
  };
  for (const auto& r : table) {
    CAPTURE(r.spec);
    const std::string e = error_of(r.spec);
    CAPTURE(e);
    const std::string head = "--inject '" + std::string(r.spec) + "': column " +
                             std::to_string(r.column) + ": " + r.says;
    CHECK(e.rfind(head, 0) == 0);
    // The caret sits under the column.
    const std::string caret =
        "\n  " + std::string(static_cast<std::size_t>(r.column - 1), ' ') + "^";
    CHECK(e.size() >= caret.size());
    CHECK(e.compare(e.size() - caret.size(), caret.size(), caret) == 0);
  }
  // The flag in the message is the caller's.
  try {
    parse_fault("x", "faults[2]");
    FAIL("accepted");
  } catch (const troupe::input_error& e) {
    CHECK(std::string(e.what()).rfind("faults[2] 'x': column 1:", 0) == 0);
  }
}

TEST_CASE("fault_to_string: refuses structs no spec can express") {
  fault_config f;
  f.action = troupe::fault_action::kill;
  f.target = "cpu";
  CHECK_THROWS_AS(troupe::config::fault_to_string(f), troupe::input_error);  // group, not device
  f.target = "cpu/0";
  f.until_step = 9;
  CHECK_THROWS_AS(troupe::config::fault_to_string(f), troupe::input_error);  // window on a kill
  f.action = troupe::fault_action::partition;
  CHECK_THROWS_AS(troupe::config::fault_to_string(f), troupe::input_error);  // device partition
  f.action = troupe::fault_action::slow;
  f.factor = 0.5;
  CHECK_THROWS_AS(troupe::config::fault_to_string(f), troupe::input_error);
  // A YAML delay's seconds that no short decimal of ms hits exactly still prints something that
  // parses (to the nearest double).
  f.action = troupe::fault_action::delay;
  f.seconds = 1.0 / 3.0;
  f.until_step = -1;
  const auto back = parse_fault(troupe::config::fault_to_string(f));
  CHECK(back.seconds == doctest::Approx(1.0 / 3.0).epsilon(1e-14));
}

TEST_CASE("check_fault_target: group and index against the cluster") {
  troupe::config::cluster_config c;
  c.groups.push_back({});
  c.groups.back().name = "cpu";
  c.groups.back().count = 2;
  c.groups.push_back({});
  c.groups.back().name = "slow";
  const auto check = [&](const std::string& spec) {
    troupe::config::check_fault_target(parse_fault(spec), c, spec);
  };
  CHECK_NOTHROW(check("kill:cpu/1@5"));
  CHECK_NOTHROW(check("partition:slow@1-2"));
  CHECK_THROWS_WITH_AS(check("kill:cpu/2@5"),
                       "--inject 'kill:cpu/2@5': device index 2 is not in group 'cpu' (count 2)",
                       troupe::input_error);
  CHECK_THROWS_WITH_AS(
      check("kill:gpu/0@5"),
      "--inject 'kill:gpu/0@5': group 'gpu' is not defined in cluster.groups (defined: cpu, slow)",
      troupe::input_error);
}

TEST_CASE("random_faults: reproducible from the seed, inside the space, printable") {
  troupe::config::fault_space s;
  s.groups = {{"cpu", 3}, {"slow", 1}};
  s.first_step = 10;
  s.last_step = 500;
  s.kinds = troupe::all_values<troupe::fault_action>();
  const auto a = troupe::config::random_faults(200, 42, s);
  const auto b = troupe::config::random_faults(200, 42, s);
  const auto c = troupe::config::random_faults(200, 43, s);
  REQUIRE(a.size() == 200);
  bool all_same = true, any_diff = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    all_same = all_same && same(a[i], b[i]);
    any_diff = any_diff || !same(a[i], c[i]);
  }
  CHECK(all_same);
  CHECK(any_diff);
  std::map<std::string, int> kinds;
  std::map<std::string, int> targets;
  std::int64_t prev = -1;
  troupe::config::cluster_config cluster;
  for (const auto& g : s.groups) {
    cluster.groups.push_back({});
    cluster.groups.back().name = g.first;
    cluster.groups.back().count = g.second;
  }
  for (const auto& f : a) {
    CHECK(f.step >= s.first_step);
    CHECK(f.step <= s.last_step);
    CHECK(f.step >= prev);  // sorted
    prev = f.step;
    ++kinds[name_of(f.action)];
    ++targets[f.target];
    if (f.action == troupe::fault_action::slow || f.action == troupe::fault_action::delay ||
        f.action == troupe::fault_action::partition) {
      CHECK(f.until_step >= f.step);
      CHECK(f.until_step <= s.last_step);
      CHECK(f.until_step - f.step < s.max_window);
    }
    if (f.action == troupe::fault_action::slow)
      CHECK((f.factor >= 1.5 && f.factor <= s.max_slow_factor));
    if (f.action == troupe::fault_action::delay)
      CHECK((f.seconds >= 0.001 && f.seconds <= s.max_delay_ms / 1000));
    if (f.action == troupe::fault_action::hang)
      CHECK((f.seconds == 0.0 || (f.seconds >= 0.1 && f.seconds <= s.max_hang_seconds)));
    // Every drawn fault is a valid spec for this cluster and prints exactly.
    const std::string text = troupe::config::fault_to_string(f);
    CAPTURE(text);
    CHECK(same(parse_fault(text), f));
    CHECK_NOTHROW(troupe::config::check_fault_target(f, cluster, text));
  }
  CHECK(kinds.size() == 8);  // 200 draws over 8 kinds: every kind appears
  for (const char* t : {"cpu/0", "cpu/1", "cpu/2", "slow/0"}) CHECK(targets[t] > 0);
  // Devices are drawn uniformly: the 3-device group takes about 3/4 of the device faults.
  const int cpu = targets["cpu/0"] + targets["cpu/1"] + targets["cpu/2"];
  CHECK(cpu > 2 * targets["slow/0"]);
}

TEST_CASE("random_faults: the default kinds leave partition out; bad spaces are refused") {
  troupe::config::fault_space s;
  s.groups = {{"cpu", 2}};
  s.first_step = 0;
  s.last_step = 0;
  for (const auto& f : troupe::config::random_faults(50, 1, s)) {
    CHECK(f.action != troupe::fault_action::partition);
    CHECK(f.step == 0);
  }
  CHECK(troupe::config::random_faults(0, 1, s).empty());
  auto bad = s;
  bad.groups.clear();
  CHECK_THROWS_AS(troupe::config::random_faults(1, 1, bad), troupe::input_error);
  bad = s;
  bad.last_step = -1;
  CHECK_THROWS_AS(troupe::config::random_faults(1, 1, bad), troupe::input_error);
  bad = s;
  bad.kinds.clear();
  CHECK_THROWS_WITH_AS(troupe::config::random_faults(1, 1, bad),
                       doctest::Contains("no fault kinds"), troupe::input_error);
  bad = s;
  bad.groups = {{"cpu", 0}};
  CHECK_THROWS_AS(troupe::config::random_faults(1, 1, bad), troupe::input_error);
}
