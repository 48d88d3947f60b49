// The config files of a service: its cluster (`troupe serve --cluster`) and the jobs-only files
// submitted to it (`troupe submit`), checked with the same messages as a whole config.
#include <doctest/doctest.h>

#include <string>

#include "core/config_load.hpp"
#include "core/error.hpp"

using namespace troupe::config;

namespace {

const char* cluster_text = R"(cluster:
  groups:
    - {name: cpu, device: cpu, count: 2}
    - {name: east, device: cpu, count: 1, process: agent}
)";

const char* job_text = R"(jobs:
  - name: a
    data: {dataset: synthetic}
    batch: 32
)";

std::string submit_error(const std::string& yaml, const std::vector<std::string>& known = {}) {
  const auto cluster = parse_cluster(cluster_text, "cluster.yaml");
  try {
    parse_jobs(yaml, "jobs.yaml", {}, cluster, known, "/state/checkpoints");
  } catch (const troupe::input_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a service's cluster file: groups only, a jobs key refused") {
  const auto c = parse_cluster(cluster_text, "cluster.yaml");
  REQUIRE(c.groups.size() == 2);
  CHECK(c.groups[1].name == "east");
  CHECK(c.groups[1].process == troupe::group_process::agent);
  try {
    parse_cluster(std::string(cluster_text) + job_text, "cluster.yaml");
    FAIL("a jobs key was taken");
  } catch (const troupe::input_error& e) {
    CHECK(std::string(e.what()).find("cluster.yaml:6: jobs: a service's cluster file holds the "
                                     "cluster only") != std::string::npos);
  }
}

TEST_CASE("a submitted file is checked against the service's cluster, with its own lines") {
  const auto cluster = parse_cluster(cluster_text, "cluster.yaml");
  const auto rc = parse_jobs(job_text, "jobs.yaml", {"jobs.0.batch=64"}, cluster, {}, "/ck");
  REQUIRE(rc.jobs.size() == 1);
  CHECK(rc.jobs[0].batch == 64);
  CHECK(rc.cluster.groups.size() == 2);
  // Every job checkpoints under the service's root, at a graceful stop at least.
  CHECK(rc.jobs[0].checkpoint.dir == "/ck");
  CHECK(rc.jobs[0].checkpoint.at_stop);
  CHECK(rc.jobs[0].checkpoint.every_steps == 0);
  CHECK(submit_error(std::string(job_text) + "    resources: [west]\n")
            .find("jobs.yaml:5: jobs[0].resources") != std::string::npos);
  CHECK(submit_error(std::string(cluster_text) + job_text)
            .find("jobs.yaml:2: cluster: a submitted file holds jobs only: the cluster is the "
                  "service's (its groups: cpu, east)") != std::string::npos);
}

TEST_CASE("after: in a submitted file names a job of the file or one the service has") {
  const std::string later = std::string(job_text) + "    after: [prep]\n";
  CHECK(submit_error(later).find("jobs.yaml:5: jobs[0].after[0]: job 'prep' is not defined") !=
        std::string::npos);
  CHECK(submit_error(later, {"prep", "prep-4"}).empty());
}

TEST_CASE("preemptible: needs checkpoints, which a service provides") {
  const std::string yaml = std::string(job_text) + "    preemptible: true\n";
  CHECK(submit_error(yaml).empty());
  // In a whole config the job must name where its checkpoints go.
  const std::string whole = std::string(cluster_text) + yaml;
  try {
    parse_config(whole, "run.yaml");
    FAIL("a preemptible job without checkpoint.dir was taken");
  } catch (const troupe::input_error& e) {
    CHECK(std::string(e.what()).find("preemptible: needs checkpoint.dir") != std::string::npos);
  }
  const auto rc = parse_config(whole + "    checkpoint: {dir: /tmp/ck}\n", "run.yaml");
  CHECK(rc.jobs[0].preemptible);
  CHECK(rc.jobs[0].checkpoint.at_stop);
}
