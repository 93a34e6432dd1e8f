// The rdmasim command line (docs/design.md, "Contract: the command line"):
//   rdmasim run EXPERIMENT.yaml [--out DIR] [--fabric F] [--seed N] [--set key=value ...]
//   rdmasim compare EXPERIMENT.yaml [--fabrics ib,roce_v1,roce_v2,iwarp] [--out DIR]
//   rdmasim sweep EXPERIMENT.yaml --vary KEY=V1,V2,... [-j N] [--out DIR] [--emit slurm | --collect]
//   rdmasim validate EXPERIMENT.yaml
#pragma once

#include <iosfwd>
#include <string_view>

namespace rdmasim {

inline constexpr std::string_view kVersion = "0.1.0";

// The exit codes (README, "Exit codes"); core/errors.hpp has the exception
// type behind each. SIGINT and SIGTERM exit 128 + the signal's number after
// removing what the run had staged (apps/output_dir.hpp).
enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,  // a failure inside rdmasim (a bug): anything not below
  kExitBadInput = 2,  // bad flags, bad experiment file, what it asks cannot run, unusable --out (InputError);
                      // also out of memory while running (std::bad_alloc: what it asked could not run here)
  kExitOutput = 3,    // output could not be written: the path and the system's reason (OutputError)
  kExitOpsFailed = 4,  // the run ended and wrote everything, but operations failed that the experiment
                       // did not ask for (no bad_rkey, post_recvs: false or faults): see results.json
};

// Parses `argv`, does the work, prints the results to `out` and problems to
// `err`; returns the exit code. Never throws.
int cli_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace rdmasim
