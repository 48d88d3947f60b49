// `troupe token [--state DIR] [--rotate]`: prints the cluster's join token, for agents and
// clients on other machines; --rotate replaces it first.
#include <cstdio>

#include "apps/args.hpp"
#include "apps/command.hpp"
#include "core/cluster_keys.hpp"
#include "core/error.hpp"

namespace troupe::apps {
namespace {

const flag_set flags{{"state"}, {"rotate"}, {}};

int run(const std::vector<std::string>& argv) {
  const args a(argv, flags);
  a.no_positionals();
  const auto dir = default_state_dir(a.get_or("state", ""));
  // Made if missing (the CA too): credentials can be prepared before the control process runs.
  open_cluster_keys(dir, {});
  const auto token = a.has("rotate") ? rotate_token(dir) : read_token(dir);
  // The one place a token is printed: on purpose, to standard output only.
  std::printf("%s\n", token.c_str());
  return exit_ok;
}

const command_registrar reg{
    {"token", "print (or rotate) the cluster's join token",
     "usage: troupe token [--state DIR] [--rotate]\n\n"
     "  --state DIR   the control process's state directory (TROUPE_STATE; default\n"
     "                ./troupe-state)\n"
     "  --rotate      write a new token first: new joins and API calls need it at once;\n"
     "                joined agents stay joined; agents started later need the new one\n\n"
     "A state directory without credentials gets them (CA and token), as at a control\n"
     "process's first start: they can be made ahead, e.g. for a Kubernetes Secret.\n\n"
     "exit: 0 printed, 2 a state directory whose files are unsafe or unreadable",
     run, flags}};

}  // namespace
}  // namespace troupe::apps
