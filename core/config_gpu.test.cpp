// The config keys of GPU groups and of the devices a job may leave out: cluster.groups[].
// layer_split, shared on cuda, and jobs[].data.leave_out.
#include <doctest/doctest.h>

#include <string>

#include "core/config_load.hpp"
#include "core/config_testing.hpp"
#include "core/error.hpp"

using namespace troupe::config;
using troupe::config::testing::error_of;

namespace {

std::string config(const std::string& group_line, const std::string& data = "") {
  return "cluster:\n  groups:\n    - {name: cpu, device: cpu, count: 2}\n" + group_line +
         "jobs:\n  - name: a\n    data: {dataset: synthetic" + data + "}\n    batch: 32\n";
}

void has(const std::string& msg, const std::string& part) {
  CHECK_MESSAGE(msg.find(part) != std::string::npos, msg);
}

}  // namespace

TEST_CASE("layer_split parses off, auto and a layer count; leave_out defaults to true") {
  const auto c = parse_config(config("    - {name: g0, device: cuda}\n"
                                     "    - {name: g1, device: cuda, layer_split: auto}\n"
                                     "    - {name: g2, device: cuda, layer_split: 4}\n"
                                     "    - {name: g3, device: cuda, shared: true}\n",
                                     ", split: adaptive"),
                              "ok.yaml");
  CHECK(c.cluster.groups[1].layer_split == -1);
  CHECK(c.cluster.groups[2].layer_split == -2);
  CHECK(c.cluster.groups[3].layer_split == 4);
  CHECK(c.cluster.groups[4].shared);
  CHECK(c.jobs[0].data.leave_out);
  const auto off = parse_config(config("", ", split: adaptive, leave_out: false"), "ok.yaml");
  CHECK_FALSE(off.jobs[0].data.leave_out);
}

TEST_CASE("layer_split and leave_out refusals name the file, line and key") {
  has(error_of(config("    - {name: g, device: cpu, layer_split: auto}\n")),
      "cluster.groups[1].layer_split: only applies with device: cuda");
  has(error_of(config("    - {name: g, device: cuda, layer_split: some}\n")),
      "layer_split: must be off, auto or a number of layers, got 'some'");
  has(error_of(config("    - {name: g, device: cuda, layer_split: -1}\n")),
      "must be off, auto or a number of layers, got '-1'");
  has(error_of(config("    - {name: g, device: cuda, shared: true, layer_split: 2}\n")),
      "a shared GPU runs whole models");
  has(error_of(config("", ", leave_out: true")),
      "jobs[0].data.leave_out: only applies with split: adaptive");
  has(error_of(config("    - {name: g, device: cpu, shared: true}\n")),
      "cluster.groups[1].shared: only applies with device: sim or cuda");
}
