// `troupe devices`: what this machine offers to a job.
#include <cstdio>
#include <thread>

#include "apps/args.hpp"
#include "apps/command.hpp"
#include "devices/cuda_info.hpp"

namespace troupe::apps {
namespace {

const flag_set flags{{}, {}, {}};

int run(const std::vector<std::string>& argv) {
  args a(argv, flags);
  std::printf("cpu   %u hardware threads (device kind cpu; sim wraps it)\n",
              std::thread::hardware_concurrency());
  if (devices::cuda_compiled())
    std::printf("cuda  %d GPU(s) visible (CUDA compiled in)\n", devices::cuda_device_count());
  else
    std::printf("cuda  not compiled in (no nvcc at build time)\n");
  return exit_ok;
}

const command_registrar reg{
    {"devices", "list the devices this machine offers", "usage: troupe devices", run, flags}};

}  // namespace
}  // namespace troupe::apps
