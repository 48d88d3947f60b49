#include "core/config_load.hpp"
#include "core/config_testing.hpp"
#include "core/job_rules.hpp"

#include <doctest/doctest.h>

#include <tuple>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"

using namespace troupe::config;
using troupe::config::testing::base;
using troupe::config::testing::error_of;
using troupe::config::testing::expect;
namespace fs = std::filesystem;

namespace {

// The base with `lines` added to jobs[0].data, from line 13 on.
std::string data_with(const std::string& lines) {
  std::string s = base;
  s.insert(s.find("    batch: 32"), lines);
  return s;
}

}  // namespace

TEST_CASE("the base config parses and fills defaults") {
  const auto rc = parse_config(base, "good.yaml");
  CHECK(rc.source == "good.yaml");
  REQUIRE(rc.cluster.groups.size() == 2);
  CHECK(rc.cluster.groups[0].count == 2);
  CHECK(rc.cluster.groups[0].threads == 1);
  CHECK_FALSE(rc.cluster.groups[0].weight.has_value());
  CHECK(rc.cluster.groups[1].device == troupe::device_kind::sim);
  CHECK(rc.cluster.groups[1].base == troupe::device_kind::cpu);
  CHECK(rc.cluster.groups[1].slowdown == 3.0);
  CHECK(rc.cluster.shares == troupe::share_mode::fixed);
  REQUIRE(rc.jobs.size() == 1);
  const auto& j = rc.jobs[0];
  CHECK(j.batch == 32);
  CHECK(j.epochs == 1);
  CHECK(j.model.kind == "mlp");
  CHECK(j.optimizer.kind == troupe::optimizer_kind::adam);
  CHECK(j.optimizer.lr == doctest::Approx(1e-3));
  CHECK(j.sync.mode == troupe::sync_mode::ps);
  CHECK(j.sync.ps_shards == 1);
  CHECK(j.data.split == troupe::split_kind::weighted);
  CHECK(j.resources.empty());
  CHECK_FALSE(j.max_steps.has_value());
}

TEST_CASE("every key of the schema is read into its field") {
  const auto rc = parse_config(base + R"(    priority: 3
    model: {kind: cnn, hidden: [8, 16, 64], conv_layers: 2, kernel: 5}
    optimizer: {kind: max-adabelief, lr: 0.01, beta1: 0.8, beta2: 0.99, eps: 1.0e-6,
                weight_decay: 0.01, form: replicated}
    epochs: 4
    max_steps: 100
    max_seconds: 2.5
    sync: {mode: ps, ps_shards: 3}
    resources: [slow]
    placement: resource-state
    seed: 9
    deterministic: yes
    share: 2
    checkpoint: {dir: /tmp/ck, every_steps: 10}
    faults:
      - {step: 5, action: slow, target: cpu/1, factor: 4, until_step: 9}
      - {step: 7, action: kill, target: cpu/0, phase: reduce}
    supervision: {crash: migrate, hang: fail-job, max_restarts: 5, restart_window: 30,
                  hang_floor_s: 2.5}
  - name: b
    after: [a]
    data:
      dataset: synthetic
      synthetic: {kind: linear, samples: 500}
      mode: sharded
      neighbour_exchange: 0.25
      preprocess: standardize
  - name: c
    data:
      dataset: synthetic
      priority: {alpha: 0.6, beta: 0.4}
)",
                               "good.yaml");
  REQUIRE(rc.jobs.size() == 3);
  const auto& a = rc.jobs[0];
  CHECK(a.priority == 3);
  CHECK(a.model.kind == "cnn");
  CHECK(a.model.hidden == std::vector<std::size_t>{8, 16, 64});
  CHECK(a.model.conv_layers == 2);
  CHECK(a.model.kernel == 5);
  CHECK(a.optimizer.kind == troupe::optimizer_kind::max_adabelief);
  CHECK(a.optimizer.beta2 == doctest::Approx(0.99));
  CHECK(a.optimizer.form ==
        troupe::optimizer_form::replicated);  // distributed needs sync: allreduce
  CHECK(a.max_steps == 100);
  CHECK(a.max_seconds == doctest::Approx(2.5));
  CHECK(a.sync.ps_shards == 3);  // period: the sync cases below (checkpoints need ps)
  CHECK(a.resources == std::vector<std::string>{"slow"});
  CHECK(a.placement == troupe::placement_kind::resource_state);
  CHECK(a.seed == 9);
  CHECK(a.deterministic);
  CHECK(a.share == 2.0);
  CHECK(a.checkpoint.every_steps == 10);
  REQUIRE(a.faults.size() == 2);
  CHECK(a.faults[0].target == "cpu/1");
  CHECK(a.faults[0].until_step == 9);
  CHECK(a.faults[0].phase == troupe::fault_phase::compute);
  CHECK(a.faults[1].phase == troupe::fault_phase::reduce);
  CHECK(a.supervision.at(troupe::failure_class::crash) == troupe::failure_policy::migrate);
  CHECK(a.supervision.size() == 2);  // the limits are not classes
  CHECK(a.max_restarts == 5);
  CHECK(a.restart_window == 30.0);
  CHECK(a.hang_floor_s == 2.5);
  const auto& b = rc.jobs[1];
  CHECK(b.max_restarts == 3);
  CHECK(b.restart_window == 60.0);
  CHECK(b.hang_floor_s == 0.5);
  CHECK(b.after == std::vector<std::string>{"a"});
  CHECK(b.data.generator == troupe::synthetic_kind::linear);
  CHECK(b.data.synthetic_samples == 500);
  CHECK(b.data.neighbour_exchange == doctest::Approx(0.25));
  const auto& c = rc.jobs[2];
  REQUIRE(c.data.priority.has_value());
  CHECK(c.data.priority->alpha == doctest::Approx(0.6));
  CHECK(b.data.preprocess == std::vector<std::string>{"standardize"});
}

TEST_CASE("every example config in config/ loads and validates") {
  int seen = 0;
  for (const auto& e : fs::directory_iterator("config")) {
    if (e.path().extension() != ".yaml") continue;
    ++seen;
    CAPTURE(e.path().string());
    try {
      const auto rc = load_config(e.path().string());
      CHECK_FALSE(rc.jobs.empty());
    } catch (const troupe::input_error& err) {
      FAIL(err.what());
    }
  }
  CHECK(seen >= 3);
  const auto demo = load_config("config/fashion_mlp.yaml");
  CHECK(demo.jobs[0].model.hidden == std::vector<std::size_t>{256, 128});
  CHECK(demo.jobs[0].data.split == troupe::split_kind::weighted);
  CHECK(demo.cluster.groups.size() == 2);
}

TEST_CASE("unknown keys are rejected at every level, with the closest known key") {
  SUBCASE("top level") {
    expect(error_of(base + "job: []\n"), "14: job:", "did you mean 'jobs'");
  }
  SUBCASE("cluster") {
    expect(error_of("cluster:\n  grups: []\n" + base.substr(base.find("jobs:"))),
           "2: cluster.grups:", "did you mean 'groups'");
  }
  SUBCASE("group") {
    std::string s = base;
    s.insert(s.find("      count: 2"), "      treads: 2\n");
    expect(error_of(s), "5: cluster.groups[0].treads:", "did you mean 'threads'");
  }
  SUBCASE("job") {
    expect(error_of(base + "    epoch: 3\n"), "14: jobs[0].epoch:", "'epochs'");
  }
  SUBCASE("nested map") {
    expect(error_of(base + "    optimizer:\n      kind: adam\n      learning_rate: 0.1\n"),
           "16: jobs[0].optimizer.learning_rate:", "unknown key");
  }
  SUBCASE("fault entry") {
    expect(error_of(base + "    faults:\n      - {step: 1, action: kill, target: cpu, when: 3}\n"),
           "15: jobs[0].faults[0].when:", "unknown key");
  }
  SUBCASE("a key one map too high") {
    expect(error_of(base + "    lr: 0.1\n"), "14: jobs[0].lr:", "did you mean 'optimizer.lr'");
    expect(error_of(base + "    split: even\n"), "14: jobs[0].split:", "'data.split'");
  }
  SUBCASE("no close key lists the known ones") {
    expect(error_of(base + "    zzzzzzzz: 1\n"), "14: jobs[0].zzzzzzzz:", "known keys: name,");
  }
  SUBCASE("a key given twice") {
    expect(error_of(base + "    batch: 64\n"), "14: jobs[0].batch:", "given twice");
  }
}

TEST_CASE("wrong types name the expected type") {
  struct row {
    const char* added;  // to the job of `base`
    const char* where;
    const char* what;
  };
  const row table[] = {
      {"    epochs: five\n", "14: jobs[0].epochs:", "expected an integer, got \"five\""},
      {"    epochs: \"5\"\n", "14: jobs[0].epochs:", "expected an integer"},  // quoted number
      {"    epochs: 1.5\n", "14: jobs[0].epochs:", "expected an integer"},
      {"    optimizer: {lr: fast}\n", "14: jobs[0].optimizer.lr:", "expected a number"},
      {"    placement: [uniform]\n", "14: jobs[0].placement:", "expected a string, got a list"},
      {"    deterministic: maybe\n", "14: jobs[0].deterministic:", "expected true or false"},
      {"    faults: {step: 1}\n", "14: jobs[0].faults:", "expected a list"},
  };
  for (const auto& r : table) {
    CAPTURE(r.added);
    expect(error_of(base + r.added), r.where, r.what);
  }
  // jobs itself not a list
  expect(error_of(base.substr(0, base.find("jobs:")) + "jobs: 3\n"), "9: jobs:", "expected a list");
}

TEST_CASE("missing required keys") {
  SUBCASE("jobs") {
    expect(error_of(base.substr(0, base.find("jobs:"))), "1: jobs:", "required key is missing");
  }
  SUBCASE("empty jobs") {
    expect(error_of(base.substr(0, base.find("jobs:")) + "jobs: []\n"),
           "9: jobs:", "at least one job");
  }
  SUBCASE("cluster.groups") {
    expect(error_of("cluster:\n  shares: fixed\n" + base.substr(base.find("jobs:"))),
           "2: cluster.groups:", "required key is missing");
  }
  SUBCASE("cluster") {
    expect(error_of(base.substr(base.find("jobs:"))), "1: cluster:", "required key is missing");
  }
  SUBCASE("job name") {
    expect(error_of(base + "  - batch: 8\n    data: {dataset: synthetic}\n"),
           "14: jobs[1].name:", "required key is missing");
  }
  SUBCASE("group name") {
    std::string s = base;
    s.replace(s.find("- name: slow"), 12, "- slowdown: 2");
    s.erase(s.find("      slowdown: 3\n"), 18);
    expect(error_of(s), "6: cluster.groups[1].name:", "required key is missing");
  }
  SUBCASE("fault action") {
    expect(error_of(base + "    faults:\n      - {step: 1, target: cpu}\n"),
           "15: jobs[0].faults[0].action:", "required key is missing");
  }
  SUBCASE("empty file") {
    expect(error_of(""), "1: (top level):", "the config is empty");
  }
}

TEST_CASE("a missing dataset names the path") {
  std::string s = base;
  SUBCASE("fashion-mnist directory absent") {
    s.replace(s.find("dataset: synthetic"), 18,
              "dataset: fashion-mnist\n      path: /nonexistent/fmnist");
    expect(error_of(s), "13: jobs[0].data.path:", "not found: /nonexistent/fmnist");
  }
  SUBCASE("idx directory missing one of the four files") {
    const auto dir = fs::temp_directory_path() / "troupe_config_test_idx";
    fs::create_directories(dir);
    for (const auto& f : idx_file_names())
      if (f != "t10k-labels-idx1-ubyte") std::ofstream(dir / (f + ".gz")) << "x";
    fs::remove(dir / "t10k-labels-idx1-ubyte.gz");
    s.replace(s.find("dataset: synthetic"), 18, "dataset: idx\n      path: " + dir.string());
    expect(error_of(s), "13: jobs[0].data.path:", "t10k-labels-idx1-ubyte");
    std::ofstream(dir / "t10k-labels-idx1-ubyte") << "x";
    CHECK(parse_config(s, "good.yaml").jobs[0].data.path == dir.string());
    fs::remove_all(dir);
  }
  SUBCASE("csv file absent") {
    s.replace(s.find("dataset: synthetic"), 18, "dataset: csv\n      path: no/such.csv");
    expect(error_of(s), "13: jobs[0].data.path:", "no/such.csv");
  }
  SUBCASE("idx without a path") {
    s.replace(s.find("dataset: synthetic"), 18, "dataset: idx");
    expect(error_of(s), "12: jobs[0].data.path:", "required for dataset: idx");
  }
  SUBCASE("the default fashion-mnist path is filled in") {
    s.replace(s.find("dataset: synthetic"), 18, "dataset: fashion-mnist");
    if (fs::is_directory(default_fashion_mnist_path)) {
      CHECK(parse_config(s, "good.yaml").jobs[0].data.path == default_fashion_mnist_path);
    } else {
      expect(error_of(s), "11: jobs[0].data.path:", default_fashion_mnist_path);
    }
  }
}

TEST_CASE("resources must name defined groups") {
  expect(error_of(base + "    resources: [cpu, gpu]\n"),
         "14: jobs[0].resources[1]:", "group 'gpu' is not defined in cluster.groups");
  expect(error_of(base + "    resources:\n      groups: [slwo]\n"),
         "15: jobs[0].resources.groups[0]:", "did you mean 'slow'");
  expect(error_of(base + "    resources: [cpu, cpu]\n"), "14: jobs[0].resources[1]:", "twice");
  expect(error_of(base + "    faults: [{step: 1, action: kill, target: gpu/0}]\n"),
         "14: jobs[0].faults[0].target:", "not defined");
  expect(error_of(base + "    faults: [{step: 1, action: kill, target: cpu/2}]\n"),
         "14: jobs[0].faults[0].target:", "count 2");
  expect(error_of(base + "    faults: [{step: 1, action: hang, target: cpu/0, phase: reduce}]\n"),
         "14: jobs[0].faults[0].phase:", "only a kill takes a phase");
  expect(error_of(base + "    faults: [{step: 1, action: kill, target: cpu/0, phase: later}]\n"),
         "14: jobs[0].faults[0].phase:", "compute, reduce");
}

TEST_CASE("batch must be positive") {
  std::string s = base;
  s.replace(s.find("batch: 32"), 9, "batch: -5");
  expect(error_of(s), "13: jobs[0].batch:", "must be positive, got -5");
  s.replace(s.find("batch: -5"), 9, "batch: 0");
  expect(error_of(s), "13: jobs[0].batch:", "must be positive, got 0");
}

TEST_CASE("dependencies: unknown jobs and cycles") {
  const std::string two = base + "    after: b\n  - name: b\n    data: {dataset: synthetic}\n";
  SUBCASE("a cycle is spelled out") {
    expect(error_of(two + "    after: [a]\n"), "14: jobs[0].after:", "cycle: a -> b -> a");
  }
  SUBCASE("a job after itself") {
    expect(error_of(base + "    after: [a]\n"), "14: jobs[0].after[0]:", "cycle: a -> a");
  }
  SUBCASE("three jobs") {
    const auto msg = error_of(two + "    after: c\n  - name: c\n    data: {dataset: synthetic}\n" +
                              "    after: [a]\n");
    expect(msg, "14: jobs[0].after:", "cycle: a -> b -> c -> a");
  }
  SUBCASE("unknown job") {
    expect(error_of(base + "    after: [z]\n"),
           "14: jobs[0].after[0]:", "job 'z' is not defined in jobs");
  }
  SUBCASE("acyclic chain is fine") {
    CHECK(parse_config(two, "good.yaml").jobs[0].after == std::vector<std::string>{"b"});
  }
}

TEST_CASE("duplicate names") {
  expect(error_of(base + "  - name: a\n    data: {dataset: synthetic}\n"),
         "14: jobs[1].name:", "already used by jobs[0]");
  std::string s = base;
  s.replace(s.find("name: slow"), 10, "name: cpu");
  expect(error_of(s), "6: cluster.groups[1].name:", "already used by cluster.groups[0]");
  expect(error_of(base + "  - name: a/b\n"), "14: jobs[1].name:", "1 to 64 letters");
  // Names become file and directory names: never "." or "..", nor hidden, nor endless.
  for (const std::string& bad : {std::string(".."), std::string("."), std::string(".hidden"),
                                 std::string("-x"), std::string(65, 'a')}) {
    CAPTURE(bad);
    expect(error_of(base + "  - name: \"" + bad + "\"\n"),
           "14: jobs[1].name:", "starting with a letter or a digit");
  }
}

TEST_CASE("enum values and numbers out of range, and keys that need another") {
  const auto group_device = [] {
    std::string s = base;
    s.replace(s.find("device: cpu"), 11, "device: gpu");
    return s;
  }();
  expect(error_of(group_device), "4: cluster.groups[0].device:", "must be one of cpu, sim, cuda");
  // A config with one mistake: where the error points and what it says.
  const std::tuple<std::string, std::string, std::string> cases[] = {
      {data_with("      split: uneven\n"), "13: jobs[0].data.split:", "even, weighted"},
      {data_with("      mode: local\n"), "13: jobs[0].data.mode:", "global, sharded"},
      {data_with("      mode: sharded\n      split: adaptive\n"),
       "13: jobs[0].data.mode:", "use split: even or weighted"},
      {data_with("      mode: sharded\n      priority: {alpha: 1}\n"),
       "13: jobs[0].data.mode:", "cannot be combined with priority"},
      {base + "    sync: {mode: ring}\n", "14: jobs[0].sync.mode:", "ps, allreduce, local"},
      {base + "    optimizer: {kind: adm}\n", "14: jobs[0].optimizer.kind:", "'adam'"},
      {base + "    optimizer: {form: sharded}\n", "14: jobs[0].optimizer.form:", "replicated"},
      {base + "    placement: random\n", "14: jobs[0].placement:", "resource-state"},
      {base + "    supervision: {crash: reboot}\n", "14: jobs[0].supervision.crash:", "fail-job"},
      {base + "    supervision: {fire: restart}\n", "14: jobs[0].supervision.fire:", "unknown"},
      {base + "    supervision: {max_restarts: -1}\n",
       "14: jobs[0].supervision.max_restarts:", ">= 0"},
      {base + "    supervision: {restart_window: 0}\n",
       "14: jobs[0].supervision.restart_window:", "positive"},
      {base + "    supervision: {hang_floor_s: 0}\n",
       "14: jobs[0].supervision.hang_floor_s:", "positive"},
      {base + "    supervision: {hang_floor_s: .nan}\n",
       "14: jobs[0].supervision.hang_floor_s:", ""},
      {base + "  - name: b\n    data: {dataset: imagenet}\n",
       "15: jobs[1].data.dataset:", "fashion-mnist"},
      {base + "    faults: [{step: 1, action: explode, target: cpu}]\n",
       "14: jobs[0].faults[0].action:", "kill"},
      {base + "    optimizer: {lr: 0}\n", "14: jobs[0].optimizer.lr:", "positive, got 0"},
      {base + "    optimizer: {beta1: 1}\n", "14: jobs[0].optimizer.beta1:", "in [0, 1)"},
      {base + "    optimizer: {beta2: -0.1}\n", "14: jobs[0].optimizer.beta2:", "in [0, 1)"},
      {base + "    sync: {ps_shards: 0}\n", "14: jobs[0].sync.ps_shards:", ">= 1"},
      {data_with("      mode: sharded\n      neighbour_exchange: 1\n"),
       "14: jobs[0].data.neighbour_exchange:", "in [0, 1)"},
      {data_with("      neighbour_exchange: 0.1\n"),
       "13: jobs[0].data.neighbour_exchange:", "mode: sharded"},
      {data_with("      priority: {alpha: 1, beta: 2}\n"),
       "13: jobs[0].data.priority.beta:", "in [0, 1]"},
      {data_with("      synthetic: {samples: 0}\n"), "13: jobs[0].data.synthetic.samples:", ">= 1"},
      {data_with("      path: /x\n"), "13: jobs[0].data.path:", "dataset: fashion-mnist"},
      {base + "    model: {kind: cnn, kernel: 4}\n", "14: jobs[0].model.kernel:", "odd"},
      {base + "    model: {kind: cnn, hidden: [8, 16], conv_layers: 3}\n",
       "14: jobs[0].model.conv_layers:", "at most the 2 entries"},
      {base + "    model: {kind: mlp, kernel: 3}\n", "14: jobs[0].model.kernel:", "kind: cnn"},
      {base + "    model: {hidden: [64, 0]}\n", "14: jobs[0].model.hidden[1]:", ">= 1, got 0"},
      {base + "    epochs: 0\n", "14: jobs[0].epochs:", ">= 1"},
      {base + "    max_seconds: -1\n", "14: jobs[0].max_seconds:", "positive"},
      {base + "    checkpoint: {every_steps: 5}\n", "14: jobs[0].checkpoint.dir:", "required"},
  };
  for (const auto& [config, where, what] : cases) expect(error_of(config), where, what);
  expect(error_of("cluster:\n  shares: fair\n" + base.substr(base.find("  groups:"))),
         "2: cluster.shares:", "fixed, adaptive");
}

TEST_CASE("numeric ranges") {
  const auto group = [](const std::string& from, const std::string& to) {
    std::string s = base;
    s.replace(s.find(from), from.size(), to);
    return error_of(s);
  };
  expect(group("slowdown: 3", "slowdown: 0.5"), "8: cluster.groups[1].slowdown:", ">= 1");
  expect(group("count: 2", "count: 0"), "5: cluster.groups[0].count:", ">= 1, got 0");
  expect(group("count: 2", "threads: -1"), "5: cluster.groups[0].threads:", ">= 1");
  expect(group("count: 2", "weight: 0"), "5: cluster.groups[0].weight:", "positive");
  expect(group("count: 2", "slowdown: 2"), "5: cluster.groups[0].slowdown:", "device: sim");
  expect(group("count: 2", "row_seconds: 2.0e-5"),
         "5: cluster.groups[0].row_seconds:", "device: sim");
  expect(group("slowdown: 3", "row_seconds: 0"), "8: cluster.groups[1].row_seconds:", "positive");
}

TEST_CASE("sync.period is a positive integer or adaptive") {
  const auto with = [](const std::string& p) {
    return base + "    sync: {mode: local, period: " + p + "}\n";
  };
  const auto four = parse_config(with("4"), "good.yaml").jobs[0].sync;
  CHECK(four.period == 4);
  CHECK_FALSE(four.adaptive_period);
  CHECK(parse_config(with("adaptive"), "good.yaml").jobs[0].sync.adaptive_period);
  expect(error_of(with("0")), "14: jobs[0].sync.period:", ">= 1, got 0");
  expect(error_of(with("often")), "14: jobs[0].sync.period:", "positive integer or \"adaptive\"");
  expect(error_of(with("2.5")), "14: jobs[0].sync.period:", "positive integer");
  expect(error_of(base + "    sync: {period: 4}\n"), "14: jobs[0].sync.period:", "mode: local");
}

TEST_CASE("file-level errors") {
  const auto msg = [](auto f) {
    try {
      f();
    } catch (const troupe::input_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(msg([] {
          load_config("config/no_such_file.yaml");
        }).find("config/no_such_file.yaml: cannot open") == 0);
  const auto syntax = msg([] { parse_config("jobs: [a, b\ncluster: x\n", "bad.yaml"); });
  CHECK_MESSAGE(syntax.rfind("bad.yaml:", 0) == 0, syntax);
  CHECK_MESSAGE(syntax.find("not valid YAML") != std::string::npos, syntax);
}

TEST_CASE("a bad value is echoed cut to a readable length, with its size") {
  const std::string huge(5000, 'x');
  // An enumeration, a number, and a --set value: each error names the key and shows at most the
  // first 60 characters of what it got.
  std::string yaml = base;
  yaml.replace(yaml.find("device: sim"), 11, "device: " + huge);
  const auto en = error_of(yaml);
  expect(en, "7: cluster.groups[1].device:", "(5000 characters)");
  CHECK(en.size() < 300);
  const auto num = error_of(data_with("      synthetic: {samples: " + huge + "}\n"));
  CHECK(num.find("(5000 characters)") != std::string::npos);
  CHECK(num.size() < 300);
  const auto set = error_of(base, {"jobs.0.batch=" + huge});
  CHECK(set.find("(5000 characters)") != std::string::npos);
  CHECK(set.size() < 400);
}

TEST_CASE("rules across keys are the ones an embedding app meets too (core/job_rules)") {
  const auto add = [](const std::string& lines) {
    std::string s = base;
    s.insert(s.find("    batch: 32"), lines);
    return s;
  };
  expect(error_of(add("    optimizer: {kind: adam, form: distributed}\n")),
         "13: jobs[0].optimizer.form:", "needs optimizer.kind: max-adabelief");
  // Every mode checkpoints, the distributed optimizer form too (each worker's moments).
  for (const std::string mode : {"allreduce", "local"})
    CHECK(parse_config(add("    sync: {mode: " + mode + "}\n" +
                           "    checkpoint: {dir: /tmp/x, every_steps: 5}\n"),
                       "ok.yaml")
              .jobs[0]
              .checkpoint.every_steps == 5);
  CHECK(parse_config(add("    sync: {mode: allreduce}\n"
                         "    optimizer: {kind: max-adabelief, form: distributed}\n"
                         "    preemptible: true\n"
                         "    checkpoint: {dir: /tmp/x, every_steps: 5}\n"),
                     "ok.yaml")
            .jobs[0]
            .preemptible);
  // A preemptible job needs somewhere to checkpoint, also when built in code.
  auto cfg = parse_config(base, "ok.yaml");
  cfg.jobs[0].preemptible = true;
  const auto r = troupe::config::job_rule_violation(cfg.jobs[0]);
  REQUIRE(r);
  CHECK(r->key == "preemptible");
  CHECK(r->what.find("needs checkpoint.dir") != std::string::npos);
}
