// The rdmasim command line (DESIGN.md, "Contract: the command line"):
//   rdmasim run EXPERIMENT.yaml [--out DIR] [--fabric F] [--seed N] [--set key=value ...]
//   rdmasim compare EXPERIMENT.yaml [--fabrics ib,roce_v1,roce_v2,iwarp] [--out DIR]
//   rdmasim validate EXPERIMENT.yaml
#pragma once

#include <iosfwd>
#include <string_view>

namespace rdmasim {

inline constexpr std::string_view kVersion = "0.1.0";

enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,  // a failure inside rdmasim, or output that could not be written
  kExitBadInput = 2,  // bad flags, bad experiment file, unknown fabric, unusable --out
};

// Parses `argv`, does the work, prints the results to `out` and problems to
// `err`; returns the exit code. Never throws.
int cli_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace rdmasim
