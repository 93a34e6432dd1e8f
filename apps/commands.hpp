// The commands of the command line, a file each (run_command.cpp: run and
// validate; compare_command.cpp, sweep_command.cpp, report_command.cpp),
// and what they share: the options cli.cpp parses into, the load step, the
// output directory, and turning what a step throws into an exit code.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "apps/cli.hpp"
#include "apps/output_dir.hpp"
#include "core/errors.hpp"
#include "experiment/loader.hpp"

namespace rdmasim::cli {

struct Options {
  std::filesystem::path file;
  std::string out;
  std::string fabric;
  std::optional<std::string> seed;  // --seed's text: the loader reads it as it reads `seed:`
  std::vector<std::string> sets;
  std::vector<std::string> fabrics;
  std::string prices;        // --prices FILE
  std::string memory_limit;  // --memory-limit SIZE; empty: default_memory_limit()
  bool quiet = false;        // run: no progress line
  bool progress = false;     // run: the progress line from the start, terminal or not
  std::string partition;     // run --partition: how to split over mpirun's ranks
  // sweep
  std::vector<std::string> vary;
  std::vector<std::string> point;  // a sweep's point: its values of the varied keys, KEY=VALUE
  unsigned jobs = 1;
  std::string emit;
  bool collect = false;
  // report
  std::vector<std::string> dirs;
  bool report = false;  // compare --report, sweep --report
};

int do_run(const Options& o, std::ostream& out, std::ostream& err);
int do_validate(const Options& o, std::ostream& out, std::ostream& err);
int do_compare(const Options& o, std::ostream& out, std::ostream& err);
int do_sweep(const Options& o, std::ostream& out, std::ostream& err);
int do_report(const Options& o, std::ostream& out, std::ostream& err);

// compare's fabrics unless told (the RDMA ones), its columns (the fabrics,
// then the variants they offer), and "; dpdk: tcp with host.stack=dpdk"
// for --fabrics' help.
std::vector<std::string> default_compare_fabrics();
std::vector<std::string> compare_columns();
std::string variants_help();

std::string join(const std::vector<std::string>& v, std::string_view sep);

// The experiment file must be a regular file before the loader sees it
// (a FIFO would block): else says why on `err` and returns false.
bool check_file(const std::filesystem::path& file, std::ostream& err);

// The load step: the loader with --set, a sweep point's values (quoted as
// --vary), --seed and `fabric` (--fabric), the
// price catalogue (--prices, then `cost:`) and the memory estimate against
// --memory-limit (default 80% of RAM). A refused experiment has errors and
// no config: nothing of it is built or written.
LoadResult load(const Options& o, std::optional<std::string> fabric);
// load() with --fabric, if given.
LoadResult load(const Options& o);

// DIR: --out, or out/<experiment name><suffix>. Throws InputError when the
// name cannot name a directory.
std::filesystem::path output_dir(const Options& o, const ExperimentConfig& cfg, std::string_view suffix = "");

void print_errors(const std::vector<LoadError>& errors, std::ostream& err);
void print_warnings(const std::vector<LoadError>& warnings, std::ostream& err);
// What a user should know about how a run ended (results.json "end" and "capture").
void warn_about_end(const nlohmann::json& results, std::ostream& err);
// The first failure the experiment did not ask for (a feature's, or a
// workload's operations), described; empty when there is none.
std::string unexpected_failure(const ExperimentConfig& cfg, const nlohmann::json& results);

struct Outcome {
  ExitCode code = kExitOk;
  nlohmann::json results;  // when kExitOk
  std::string message;     // otherwise: what to print
};

// Calls `work`, turning what it throws into an exit code and a message
// (cli.hpp): the exception's type says whose fault it is.
template <typename Work>
Outcome guarded(Work&& work) {
  try {
    return {kExitOk, work(), {}};
  } catch (const InputError& e) {
    return {kExitBadInput, {}, e.what()};
  } catch (const OutputError& e) {
    return {kExitOutput, {}, std::string("error: ") + e.what()};
  } catch (const std::filesystem::filesystem_error& e) {
    return {kExitOutput, {}, "error: " + e.path1().string() + ": " + e.code().message()};
  } catch (const std::bad_alloc&) {  // the staged output is gone with the stack
    return {kExitBadInput, {}, out_of_memory_message()};
  } catch (const std::exception& e) {
    return {kExitInternal, {}, std::string("internal error: ") + e.what()};
  } catch (...) {
    return {kExitInternal, {}, "internal error: unknown exception"};
  }
}

}  // namespace rdmasim::cli
