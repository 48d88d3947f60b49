// `troupe plot REPORT.json -o DIR`: the dashboard's charts of a finished run as one standalone
// HTML file, DIR/index.html: the page, Chart.js and the report in one file, so that it opens
// from disk in any browser, with no server and no network.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "apps/args.hpp"
#include "apps/command.hpp"
#include "service/dashboard_assets.hpp"

namespace troupe::apps {
namespace {

std::string asset(const std::string& path) {
  const auto* a = service::dashboard_asset(path);
  if (!a) throw runtime_failure("the dashboard's " + path + " is missing from this build");
  return std::string(reinterpret_cast<const char*>(a->data), a->size);
}

// Text inside <script>: a "</" would end it early (a string in the report may hold one).
std::string script_safe(std::string text) {
  for (auto at = text.find("</"); at != std::string::npos; at = text.find("</", at + 3))
    text.replace(at, 2, "<\\/");
  return text;
}

void replace_once(std::string& page, const std::string& what, const std::string& with) {
  const auto at = page.find(what);
  if (at == std::string::npos) throw runtime_failure("the dashboard page has no " + what);
  page.replace(at, what.size(), with);
}

const flag_set flags{{"out"}, {}, {}};

int run(const std::vector<std::string>& argv) {
  // -o DIR, as plotting tools spell it, is --out DIR.
  auto words = argv;
  for (auto& w : words)
    if (w == "-o") w = "--out";
  const args a(words, flags);
  if (a.positionals().size() != 1 || !a.has("out"))
    throw input_error("expected a REPORT.json and -o DIR (usage: troupe plot REPORT.json -o DIR)");
  const auto& path = a.positionals()[0];
  std::ifstream in(path);
  if (!in) throw input_error(path + ": cannot read it");
  const auto report = nlohmann::json::parse(in, nullptr, false);
  if (report.is_discarded()) throw input_error(path + ": not JSON");
  if (!report.is_object() || !report.contains("jobs") || !report["jobs"].is_array())
    throw input_error(path + ": not a run report (no jobs list; troupe run --report writes one)");
  for (const auto& j : report["jobs"])
    if (!j.is_object() || !j.contains("series"))
      throw input_error(path + ": job '" + (j.is_object() ? j.value("name", "?") : "?") +
                        "' has no series (a report of an older Troupe?)");
  const std::filesystem::path dir = *a.get("out");
  std::filesystem::create_directories(dir);
  auto page = asset("/index.html");
  replace_once(page, "<script src=\"chart.min.js\"></script>",
               "<script>" + script_safe(asset("/chart.min.js")) + "</script>");
  replace_once(
      page, "<script src=\"dashboard.js\"></script>",
      "<script>window.TROUPE_REPORT = " + script_safe(report.dump()) +
          ";\nwindow.TROUPE_REPORT_NAME = " +
          script_safe(nlohmann::json(std::filesystem::path(path).filename().string()).dump()) +
          ";</script>\n<script>" + script_safe(asset("/dashboard.js")) + "</script>");
  const auto out_path = dir / "index.html";
  std::ofstream out(out_path);
  out << page;
  if (!out.flush()) throw runtime_failure(out_path.string() + ": cannot write it");
  std::printf("%s (%zu jobs)\n", out_path.string().c_str(), report["jobs"].size());
  return exit_ok;
}

const command_registrar reg{
    {"plot", "the dashboard's charts of a finished run's report, as one standalone HTML file",
     "usage: troupe plot REPORT.json -o DIR   (or --out DIR)\n\n"
     "Writes DIR/index.html: per job the loss, throughput, split per group, busy per worker,\n"
     "faults and recoveries and the events (the report's series and events), with Chart.js\n"
     "inside, so that it opens from disk. REPORT.json: troupe run --report FILE.\n\n"
     "exit: 0 written, 2 not a readable report",
     run, flags}};

}  // namespace
}  // namespace troupe::apps
