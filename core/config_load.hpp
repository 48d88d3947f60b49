#pragma once
// Loading a run config: YAML text -> the validated structs of core/config.hpp (schema in
// config/README.md). Everything that can be checked without running is checked here, so that
// a bad config fails before any actor starts, with a message a user can act on:
//
//   config/x.yaml:12: jobs[0].batch: must be positive, got -5
//   config/x.yaml: --set 'jobs.0.batch=-5': jobs[0].batch: must be positive, got -5
//
// Errors are troupe::input_error (exit code 2 at the command line).
#include <string>
#include <vector>

#include "core/config.hpp"

namespace troupe::config {

// Where the fashion-mnist dataset lives when a job gives no data.path.
inline constexpr const char* default_fashion_mnist_path = "/usr/share/datasets/fashion-mnist";

// The four files of the MNIST/Fashion-MNIST IDX layout, each present as-is or gzip'ed (.gz).
const std::vector<std::string>& idx_file_names();

// Reads and validates the YAML file at `path`. `sets` are `--set PATH=VALUE` overrides: PATH is
// dotted into the YAML tree (list entries by index: jobs.0.epochs, cluster.groups.1.slowdown),
// VALUE is parsed as YAML (so `[64, 32]` is a list); they apply in order before validation. A
// missing key may be created when the schema knows it; index == length appends an entry.
run_config load_config(const std::string& path, const std::vector<std::string>& sets = {});

// The same from text; `source_name` is what messages call the file.
run_config parse_config(const std::string& yaml_text, const std::string& source_name,
                        const std::vector<std::string>& sets = {});

// A jobs-only file submitted to a running service (`troupe submit`): the same checks and messages
// as parse_config, against the service's `cluster` (a `cluster:` key in the file is refused).
// `after:` may also name one of `known_jobs` (jobs the service already has). A non-empty
// `checkpoint_root` becomes every job's checkpoint.dir where its sync mode takes checkpoints.
run_config parse_jobs(const std::string& yaml_text, const std::string& source_name,
                      const std::vector<std::string>& sets, const cluster_config& cluster,
                      const std::vector<std::string>& known_jobs,
                      const std::string& checkpoint_root);

// The `cluster:` of a service (`troupe serve --cluster FILE`): a file without jobs.
cluster_config parse_cluster(const std::string& yaml_text, const std::string& source_name);

}  // namespace troupe::config
