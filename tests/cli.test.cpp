// `troupe run` end to end through the built binary: bad input exits 2 before any training (the
// config loader's own tests cover each message; this checks the command's exit code and that the
// message names the file and line), and a tiny good run exits 0 with the report's keys.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "tests/binary_support.hpp"

namespace fs = std::filesystem;
using namespace troupe::testing;

namespace {

fs::path scratch() {
  return scratch_dir("troupe-cli-test");
}

outcome run_troupe(const std::string& args) {
  return run_troupe_in(scratch(), "run " + args, 120);
}

fs::path write(const std::string& name, const std::string& text) {
  return write_file(scratch(), name, text);
}

const char* good =
    "cluster:\n"
    "  groups:\n"
    "    - {name: cpu, device: cpu, count: 2, weight: 1}\n"
    "jobs:\n"
    "  - name: tiny\n"
    "    model: {kind: softmax}\n"
    "    data: {dataset: synthetic, synthetic: {samples: 500}}\n"
    "    optimizer: {kind: sgd, lr: 0.1}\n"
    "    batch: 50\n"
    "    max_steps: 5\n";

// `troupe run CONFIG ARGS --quiet --report REPORT` must exit 0; its report.
nlohmann::json run_for_report(const fs::path& config, const std::string& args,
                              const fs::path& report) {
  const auto o = run_troupe(config.string() + " " + args + " --quiet --report " + report.string());
  CAPTURE(o.err);
  REQUIRE(o.code == 0);
  nlohmann::json j;
  std::ifstream(report) >> j;
  return j;
}

}  // namespace

TEST_CASE("troupe run: malformed configs exit 2 before any training") {
  std::string base = good;
  struct bad_case {
    std::string name, from, to, says;
  };
  const bad_case cases[] = {
      {"unknown_key", "    batch: 50\n", "    batch: 50\n    bogus: 1\n", "bogus"},
      {"wrong_type", "    batch: 50\n", "    batch: fifty\n", "batch"},
      {"negative_batch", "    batch: 50\n", "    batch: -5\n", "batch"},
      {"undefined_group", "    max_steps: 5\n", "    max_steps: 5\n    resources: [gpu]\n", "gpu"},
      {"missing_dataset", "{dataset: synthetic, synthetic: {samples: 500}}",
       "{dataset: idx, path: /nonexistent/troupe-data}", "nonexistent"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    std::string text = base;
    const auto at = text.find(c.from);
    REQUIRE(at != std::string::npos);
    text.replace(at, c.from.size(), c.to);
    const auto path = write(c.name + ".yaml", text);
    const auto o = run_troupe(path.string() + " --report " + (scratch() / "r.json").string());
    CAPTURE(o.err);
    CHECK(o.code == 2);
    CHECK(o.err.find(path.string()) != std::string::npos);  // names the file
    CHECK(o.err.find(c.says) != std::string::npos);         // and the key or value
    CHECK_FALSE(fs::exists(scratch() / "r.json"));          // nothing ran
  }
  const auto dep_cycle = write("cycle.yaml", std::string(good) +
                                                 "    after: [other]\n  - name: other\n"
                                                 "    model: {kind: softmax}\n"
                                                 "    data: {dataset: synthetic}\n"
                                                 "    after: [tiny]\n");
  const auto o = run_troupe(dep_cycle.string());
  CAPTURE(o.err);
  CHECK(o.code == 2);
  CHECK(o.err.find("cycle") != std::string::npos);
  CHECK(run_troupe("/nonexistent/troupe.yaml").code == 2);
  CHECK(run_troupe(write("ok.yaml", good).string() + " --set jobs.0.batch=-1").code == 2);
  // A codec that collectives cannot build (or one for SPD matrices): the runtime names the key.
  for (const std::string codec : {"zip", "spd-tri"}) {
    CAPTURE(codec);
    const auto c = run_troupe(write("codec.yaml", good).string() +
                              " --set jobs.0.sync.mode=allreduce --set jobs.0.sync.codec=" + codec);
    CAPTURE(c.err);
    CHECK(c.code == 2);
    CHECK(c.err.find("sync.codec: ") != std::string::npos);
    CHECK(c.err.find(codec) != std::string::npos);
  }
}

TEST_CASE("troupe run: a good config exits 0 and writes the documented report") {
  REQUIRE(fs::exists(troupe_binary()));
  const auto report = scratch() / "out" / "report.json";
  const auto j = run_for_report(write("good.yaml", good), "", report);
  REQUIRE(j["jobs"].size() == 1);
  const auto& job = j["jobs"][0];
  for (const char* key :
       {"name", "status", "epochs", "steps", "global_batch", "started_s", "finished_s",
        "wall_seconds", "samples_per_second", "train_loss", "test_loss", "test_accuracy", "params",
        "workers", "faults", "sync", "rebalances"})
    CHECK_MESSAGE(job.contains(key), key);
  CHECK(job["status"] == "completed");
  CHECK(job["steps"] == 5);
  CHECK(job["workers"].size() == 2);
  CHECK(job["params"]["fnv1a64"].get<std::string>().size() == 18);
  CHECK(job["faults"]["recovery_ms"].is_array());
  CHECK(job["faults"]["detect_ms"].is_array());
  CHECK(job["sync"]["rounds"] == 5);
  CHECK(j["cluster"]["devices"] == 2);
  // What ran it and when (UTC, ISO 8601 with milliseconds).
  CHECK(j["troupe_version"].get<std::string>().find('.') != std::string::npos);
  const auto created = j["created_at"].get<std::string>();
  CHECK(created.size() == 24);
  CHECK(created.back() == 'Z');
  // In bytes: a process holding a model and a dataset is above 1 MiB and below this machine's
  // memory (a count in KiB taken for bytes would be far below).
  const auto rss = j["peak_rss_bytes"].get<std::uint64_t>();
  CHECK(rss > (std::uint64_t{1} << 20));
  CHECK(rss < (std::uint64_t{64} << 30));
  CHECK(fs::exists(report.parent_path() / "logs" / "tiny.log"));
  // The course of the job, step by step and event by event (docs/REPORT.md).
  CHECK(job["series"]["points"].size() == 5);
  CHECK(job["series"]["points"][4]["step"] == 5);
  CHECK(job["series"]["workers"].size() == 2);
  CHECK(job["events"].is_array());
  // Time keys in seconds (`_s`) beside the deprecated names they replace, the same values.
  CHECK(job["wall_s"] == job["wall_seconds"]);
  CHECK(j["cluster"]["wall_s"] == j["cluster"]["wall_seconds"]);
  CHECK(job["series"]["points"][4]["t_s"] == job["series"]["points"][4]["t"]);
  CHECK(job["faults"]["detect_s"].size() == job["faults"]["detect_ms"].size());
  REQUIRE(job.contains("step_phases"));
  for (const auto& [phase, us] : job["step_phases"].items())
    if (phase.size() > 3 && phase.substr(phase.size() - 3) == "_us") {
      CAPTURE(phase);
      const auto s = job["step_phases"][phase.substr(0, phase.size() - 3) + "_s"];
      CHECK(s.get<double>() == doctest::Approx(us.get<double>() * 1e-6));
    }
  fs::remove_all(scratch());
}

TEST_CASE(
    "troupe run: the report keeps the config as run, and running it again gives the same "
    "model") {
  const auto j = run_for_report(write("asrun.yaml", good),
                                "--set jobs.0.deterministic=true --set jobs.0.max_steps=7",
                                scratch() / "1.json");
  const auto& config = j.at("config");
  CHECK(config.at("source") == (scratch() / "asrun.yaml").string());
  CHECK(config.at("sets") ==
        nlohmann::json::array({"jobs.0.deterministic=true", "jobs.0.max_steps=7"}));
  // The document as run: the sets applied, so it needs none to run the same jobs.
  const auto yaml = config.at("yaml").get<std::string>();
  CHECK(yaml.find("max_steps: 7") != std::string::npos);
  const auto k = run_for_report(write("again.yaml", yaml), "", scratch() / "2.json");
  CHECK(k["jobs"][0]["steps"] == 7);
  CHECK(k["jobs"][0]["params"]["fnv1a64"] == j["jobs"][0]["params"]["fnv1a64"]);
  CHECK(k.at("config").at("sets").empty());
  fs::remove_all(scratch());
}

TEST_CASE("troupe run --log-format json: every line of the job's log is one JSON object") {
  const auto logs = scratch() / "json-logs";
  const auto o = run_troupe(write("json.yaml", good).string() + " --quiet --log-format json " +
                            "--log-dir " + logs.string());
  CAPTURE(o.err);
  REQUIRE(o.code == 0);
  std::ifstream in(logs / "tiny.log");
  int lines = 0, steps = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    REQUIRE_MESSAGE(j.is_object(), line);
    for (const char* key : {"time", "level", "job", "generation", "step", "message"})
      CHECK_MESSAGE(j.contains(key), key);
    CHECK(j["job"] == "tiny");
    steps += j["message"].get<std::string>().rfind("step ", 0) == 0 ? 1 : 0;
  }
  CHECK(lines > 5);
  CHECK(steps == 5);
  CHECK(run_troupe(write("json2.yaml", good).string() + " --log-format xml").code == 2);
  fs::remove_all(scratch());
}

// Each line of `text` one JSON object of the log's keys; the levels seen, and the messages.
std::pair<std::set<std::string>, std::string> json_lines(const std::string& text) {
  std::set<std::string> levels;
  std::string messages;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    REQUIRE_MESSAGE(j.is_object(), line);
    CHECK_MESSAGE(j.contains("time"), line);
    levels.insert(j.value("level", "?"));
    messages += j.value("message", "") + "\n";
  }
  return {levels, messages};
}

TEST_CASE("troupe run --log-format json: stdout and stderr too, the summary and errors included") {
  const auto o = run_troupe(write("console.yaml", good).string() + " --log-format json " +
                            "--log-dir " + (scratch() / "console-logs").string());
  CAPTURE(o.err);
  REQUIRE(o.code == 0);
  const auto [out_levels, out] = json_lines(read_file(scratch() / "stdout.txt"));
  CHECK(out.find("tiny: completed  steps 5") != std::string::npos);
  CHECK(out.find("peak RSS") != std::string::npos);
  CHECK(out_levels.count("info") == 1);
  json_lines(o.err);  // every stderr line, if any, is JSON too

  // An error before anything runs: one JSON line on stderr, level error, naming the file.
  const auto bad =
      run_troupe(write("console-bad.yaml", "cluster: [\n").string() + " --log-format json");
  CHECK(bad.code == 2);
  const auto [err_levels, err] = json_lines(bad.err);
  CHECK(err_levels == std::set<std::string>{"error"});
  CHECK(err.find("troupe run: ") == 0);
  CHECK(err.find("console-bad.yaml") != std::string::npos);
  fs::remove_all(scratch());
}

TEST_CASE("troupe submit: a file that is not UTF-8 exits 2 naming it, before any request") {
  const auto file = scratch() / "garbage.yaml";
  {
    std::ofstream out(file, std::ios::binary);
    out << "job\xff\xfe\x01s:\n";
  }
  // No service listens there: the file is refused before the client would try it.
  const auto r =
      run_troupe_in(scratch(), "submit " + file.string() + " --server https://127.0.0.1:9", 60);
  CHECK(r.code == 2);
  CAPTURE(r.err);
  CHECK(r.err.find(file.string() + ": not UTF-8 text") != std::string::npos);
  CHECK(r.err.find("index 3") != std::string::npos);
}

TEST_CASE("troupe run: where it cannot write is refused before anything trains, exit 2") {
  // The report after the run, the logs during it, the checkpoints at their interval: each would
  // otherwise be found out late (the report after all the training) or skipped in silence.
  const auto cfg = write("where.yaml", good).string();
  const auto plain = write("plain-file", "x");
  struct where_case {
    std::string args, says;
  };
  const where_case cases[] = {
      {"--report /proc/troupe-report.json", "--report /proc/troupe-report.json: cannot write"},
      {"--log-dir /proc/troupe-logs", "--log-dir /proc/troupe-logs"},
      {"--set jobs.0.checkpoint.dir=" + plain.string() +
           "/ckpt --set jobs.0.checkpoint.every_steps=2",
       "checkpoint.dir " + plain.string() + "/ckpt"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    const auto logs = scratch() / "where-logs";
    fs::remove_all(logs);
    const auto o =
        run_troupe(cfg + " --quiet " + c.args +
                   (c.args.find("--log-dir") == std::string::npos ? " --log-dir " + logs.string()
                                                                  : std::string()));
    CHECK(o.code == 2);
    CHECK_MESSAGE(o.err.find(c.says) != std::string::npos, o.err);
    // Nothing trained: no job log was written.
    CHECK_FALSE(fs::exists(logs / "tiny.log"));
  }
  fs::remove_all(scratch());
}

TEST_CASE("troupe run --resume appends to the job's log, marking where the new run begins") {
  const auto dir = scratch() / "append";
  const auto ckpt = dir / "ckpt";
  const auto logs = dir / "logs";
  std::string text = good;
  text += "    checkpoint: {dir: " + ckpt.string() + ", every_steps: 2}\n";
  const auto cfg = write("append.yaml", text).string();
  REQUIRE(run_troupe(cfg + " --quiet --log-dir " + logs.string()).code == 0);
  std::string first;
  {
    std::ifstream in(logs / "tiny.log");
    first.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  REQUIRE(first.find("step 5/5") != std::string::npos);
  auto longer = text;
  longer.replace(longer.find("max_steps: 5"), 12, "max_steps: 8");
  const auto cfg2 = write("append2.yaml", longer).string();
  const auto o =
      run_troupe(cfg2 + " --quiet --log-dir " + logs.string() + " --resume " + ckpt.string());
  CAPTURE(o.err);
  REQUIRE(o.code == 0);
  std::string both;
  {
    std::ifstream in(logs / "tiny.log");
    both.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // The first run's lines, then the marker, then the resumed run's.
  CHECK(both.rfind(first, 0) == 0);
  const auto mark = both.find("---- a new run of job 'tiny' begins here ----");
  REQUIRE(mark != std::string::npos);
  CHECK(mark >= first.size());
  CHECK(both.find("step 8/8", mark) != std::string::npos);
  fs::remove_all(scratch());
}

TEST_CASE("troupe --version prints the version, the commit and the features") {
  const auto o = run_troupe_in(scratch(), "--version", 30);
  CHECK(o.code == 0);
  std::ifstream in(scratch() / "stdout.txt");
  std::string first, cuda;
  std::getline(in, first);
  std::getline(in, cuda);
  CHECK_MESSAGE(first.rfind("troupe ", 0) == 0, first);
  CHECK_MESSAGE(first.find(" (commit ") != std::string::npos, first);
  CHECK_MESSAGE(cuda.rfind("cuda: ", 0) == 0, cuda);
  const auto v = run_troupe_in(scratch(), "version extra", 30);
  CHECK(v.code == 2);
  fs::remove_all(scratch());
}
