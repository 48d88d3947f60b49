// ctest-label: browser
// The dashboard as a user sees it: Debian's headless Chromium against `troupe run --http` with a
// running job. The page must show the job and a loss curve of at least 10 points; a screenshot
// is kept as build/dashboard.png (it is what the page looked like, for a person to look at).
// Without chromium the test says so and passes: tools/packages.txt installs it.
#include <httplib.h>

#include <sys/wait.h>
#include <cstdlib>
#include <regex>

#include "tests/service_support.hpp"

using namespace troupe::testing;

namespace {

const std::filesystem::path& scratch = service_scratch();

// `chromium --headless ARGS URL`, its stdout into `out`, with a deadline. Exit code.
int chromium(const std::string& args, const std::string& url, const std::filesystem::path& out) {
  // Root in a container needs --no-sandbox; the virtual time budget lets the page's one-second
  // polls run a few times, waiting for their fetches. Each call has a profile of its own: with a
  // shared one, a browser still shutting down holds the profile's lock and the next one may hand
  // its command line over to it instead of running.
  const std::string cmd =
      "timeout 60 chromium --headless --no-sandbox --disable-gpu "
      "--hide-scrollbars --virtual-time-budget=6000 --user-data-dir='" +
      out.string() + ".profile' " + args + " '" + url + "' > '" + out.string() + "' 2> '" +
      out.string() + ".err'";
  return std::system(cmd.c_str());
}

// Headless Chromium with --virtual-time-budget sometimes never ends (its virtual clock waits for
// a quiet moment of the page's polls): measured against a sanitized `troupe run` on two busy
// cores, 1 call in 8 hung and the others took 14-18 s. Chromium's own bug, not the page's: a
// hang (timeout's 124) is tried again, up to three calls, while the job runs on. A failure shows
// Chromium's own stderr; any other exit fails at once. Note that Chromium exits 0 when the page
// cannot load at all, so the caller checks what it wrote.
int chromium_tries(const std::string& args, const std::string& url,
                   const std::filesystem::path& out) {
  int rc = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    rc = chromium(args, url, out);
    if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 124) break;
    MESSAGE("chromium hung for 60 s (call " << attempt + 1 << " of 3)");
  }
  if (rc != 0) {
    std::stringstream err;
    err << std::ifstream(out.string() + ".err").rdbuf();
    const std::string text = err.str();
    MESSAGE("chromium exited " << rc << "; its stderr ends:\n"
                               << text.substr(text.size() > 2000 ? text.size() - 2000 : 0));
  }
  return rc;
}

}  // namespace

TEST_CASE("headless Chromium: the dashboard shows the running job and a curve of 10+ points") {
  if (std::system("command -v chromium > /dev/null 2>&1") != 0) {
    MESSAGE("skipped: chromium is not installed (tools/packages.txt installs it)");
    return;
  }
  // 32 ms a step (16 rows of 2 ms on each worker): the job's 16,000 steps outlast every
  // Chromium call below, retries included, and the page's history stays small.
  const auto config = write("dash.yaml",
                            "cluster:\n  groups:\n"
                            "    - {name: cpu, device: sim, base: cpu, slowdown: 1, row_seconds: "
                            "0.002, count: 2}\n"
                            "jobs:\n" +
                                job_yaml("dash", "cpu", 100000) +
                                "    faults: [{action: kill, target: cpu/1, step: 15}]\n");
  const int port = free_port();
  const std::string url = "https://127.0.0.1:" + std::to_string(port);
  const auto state = scratch / "dash-state";
  troupe_process run(scratch, "dash-run",
                     {"run", config, "--http", "127.0.0.1:" + std::to_string(port), "--quiet",
                      "--log-dir", (scratch / "dash-logs").string(), "--state", state.string()});
  REQUIRE(wait_until(60, [&] { return std::filesystem::exists(state / "token"); }));
  std::string token;
  std::getline(std::ifstream(state / "token"), token);
  httplib::Client api(url);
  api.set_ca_cert_path((state / "tls" / "ca.crt").string());
  api.enable_server_certificate_verification(true);
  api.set_bearer_token_auth(token);
  api.set_read_timeout(10, 0);
  REQUIRE(wait_until(120, [&] {
    const auto r = api.Get("/api/v1/jobs");
    if (!r || r->status != 200) return false;
    const auto j = json::parse(r->body, nullptr, false);
    return j.is_object() && !j["jobs"].empty() && j["jobs"][0].value("step", 0) >= 40;
  }));

  const auto dom = scratch / "dom.html";
  // Chromium trusts exactly the service's key (a user would import STATE/tls/ca.crt instead).
  const auto spki = scratch / "dash-spki";
  REQUIRE(std::system(("openssl x509 -in '" + (state / "tls" / "control.crt").string() +
                       "' -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst "
                       "-sha256 -binary | base64 > '" +
                       spki.string() + "'")
                          .c_str()) == 0);
  std::string pin;
  std::getline(std::ifstream(spki), pin);
  const std::string trust = "--ignore-certificate-errors-spki-list=" + pin + " ";
  const std::string page_url = url + "/#token=" + token;
  REQUIRE(chromium_tries(trust + "--dump-dom", page_url, dom) == 0);
  std::stringstream page;
  page << std::ifstream(dom).rdbuf();
  std::smatch m;
  const std::string html = page.str();
  REQUIRE_MESSAGE(std::regex_search(
                      html, m, std::regex("<body data-job=\"([^\"]*)\" data-points=\"([0-9]+)\"")),
                  html.substr(0, 400));
  CHECK(m[1] == "dash");
  CHECK(std::stoi(m[2]) >= 10);
  MESSAGE("the page drew job " << m[1] << " with " << m[2] << " points");
  CHECK(html.find("<td>dash</td>") != std::string::npos);
  // The injected kill and its recovery are on the page's event list.
  CHECK(html.find("failure: worker cpu/1 crash") != std::string::npos);

  const auto shot = troupe_binary().parent_path() / "dashboard.png";
  std::filesystem::remove(shot);
  REQUIRE(chromium_tries(trust + "--window-size=1400,1500 --screenshot='" + shot.string() + "'",
                         page_url, scratch / "shot.out") == 0);
  std::ifstream png(shot, std::ios::binary);
  std::string magic(8, '\0');
  png.read(magic.data(), 8);
  CHECK(magic == "\x89PNG\r\n\x1a\n");
  CHECK(std::filesystem::file_size(shot) > 20000);
  MESSAGE("screenshot: " << shot.string());
}

TEST_CASE("troupe plot: a finished run's report as one HTML file that Chromium draws from disk") {
  const auto config = write("plotted.yaml",
                            "cluster:\n  groups:\n    - {name: cpu, device: cpu, count: 2}\n"
                            "jobs:\n" +
                                job_yaml("plotted", "cpu", 60) +
                                "    faults: [{action: kill, target: cpu/1, step: 20}]\n");
  const auto report = scratch / "plotted-report.json";
  troupe_process run(scratch, "plot-run",
                     {"run", config, "--report", report.string(), "--quiet", "--log-dir",
                      (scratch / "plot-logs").string()});
  REQUIRE(run.wait_for_exit(120) == 0);
  const auto dir = scratch / "plot";
  troupe_process plot(scratch, "plot", {"plot", report.string(), "-o", dir.string()});
  REQUIRE(plot.wait_for_exit(60) == 0);
  REQUIRE(std::filesystem::exists(dir / "index.html"));
  // Not a report: refused, naming the file.
  const auto junk = write("junk.json", "{\"x\": 1}");
  troupe_process bad(scratch, "plot-bad", {"plot", junk, "-o", (scratch / "nothing").string()});
  CHECK(bad.wait_for_exit(60) == 2);
  CHECK(bad.err().find("junk.json: not a run report") != std::string::npos);

  if (std::system("command -v chromium > /dev/null 2>&1") != 0) {
    MESSAGE("skipped the drawing: chromium is not installed (tools/packages.txt installs it)");
    return;
  }
  const auto url = "file://" + (dir / "index.html").string();
  const auto dom = scratch / "plot-dom.html";
  REQUIRE(chromium("--dump-dom", url, dom) == 0);
  std::stringstream page;
  page << std::ifstream(dom).rdbuf();
  const std::string html = page.str();
  std::smatch m;
  REQUIRE(std::regex_search(html, m,
                            std::regex("<body data-job=\"([^\"]*)\" data-points=\"([0-9]+)\"")));
  CHECK(m[1] == "plotted");
  CHECK(std::stoi(m[2]) == 60);  // every step of a short run is a point
  CHECK(html.find("report: plotted-report.json") != std::string::npos);
  CHECK(html.find("failure: worker cpu/1 crash: injected kill at step 20") != std::string::npos);
  const auto shot = troupe_binary().parent_path() / "plot.png";
  std::filesystem::remove(shot);
  REQUIRE(chromium("--window-size=1400,800 --screenshot='" + shot.string() + "'", url,
                   scratch / "plot-shot.out") == 0);
  CHECK(std::filesystem::file_size(shot) > 20000);
}
