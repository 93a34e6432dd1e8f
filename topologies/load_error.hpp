// An error in an experiment or on the command line, where it was found.
// No yaml-cpp here: the loader's callers include this.
#pragma once

#include <string>
#include <string_view>

namespace rdmasim {

// The file name errors about --set, --fabric and --seed carry.
inline constexpr std::string_view kCommandLine = "<command line>";

struct LoadError {
  std::string file;            // the experiment file, or "<command line>"; line = position of the option
  int line = 0, column = 0;    // from 1
  std::string message;         // "key.path: what is wrong"
  std::string format() const;  // "file:line:column: message"
};

}  // namespace rdmasim
