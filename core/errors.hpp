// The failures the command line tells apart, each with its exit code
// (README, "Exit codes"). Anything else that escapes is an internal error.
#pragma once

#include <stdexcept>

namespace rdmasim {

// The experiment, a flag or what they ask for cannot be run as given, and
// the message says why (located when there is a place to point at). The
// user can fix it: exit 2.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Output could not be written: the message names the path and the system's
// reason (disk full, permission denied, ...). Exit 3.
struct OutputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace rdmasim
