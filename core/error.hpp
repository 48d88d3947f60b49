#pragma once
// The error currency below the actor layer (core, data, models, devices, policies): exceptions of
// two kinds, because callers treat them differently. Actors convert them to caf::error at their
// boundary; the command line maps input_error to exit code 2 and runtime_failure to exit code 1.
#include <stdexcept>
#include <string>

namespace troupe {

// Bad input from a user: a config, a dataset file, a command-line flag. The message names the
// file, key or peer so that the user can fix it without reading code.
class input_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Something failed while running: a device, a peer, a deadline.
class runtime_failure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace troupe
