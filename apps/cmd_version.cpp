// `troupe version` (also `troupe --version`): the version, the commit the binary was built from,
// and what the build can do, so that a bug report or a mismatched agent says what it runs.
#include <cstdio>
#include <string>
#include <vector>

#include "apps/args.hpp"
#include "apps/command.hpp"
#include "core/error.hpp"

namespace troupe::apps {

const char* build_commit();  // generated at build time (cmake/build_info.cmake)

namespace {

const flag_set flags{{}, {}, {}};

int run(const std::vector<std::string>& argv) {
  args a(argv, flags);
  if (!a.positionals().empty()) throw input_error("takes no arguments (usage: troupe version)");
  std::printf("troupe %s (commit %s)\n", TROUPE_VERSION, build_commit());
#ifdef TROUPE_HAVE_CUDA
  std::printf("cuda: built (the cuda device; NCCL is loaded when a GPU group starts)\n");
#else
  std::printf("cuda: not built (no nvcc when it was configured)\n");
#endif
  std::printf("libtorch: not built\n");
  return exit_ok;
}

const command_registrar reg{
    {"version", "print the version, the commit of the build and its features",
     "usage: troupe version   (or troupe --version)\n\n"
     "Prints `troupe VERSION (commit COMMIT)`, then one line per optional feature. Agents must\n"
     "run the same version as the control process they join.",
     run, flags}};

}  // namespace
}  // namespace troupe::apps
