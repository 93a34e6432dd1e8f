// Real verbs programs on the simulated hosts (`programs:`, docs/programs.md).
//
// Each program is a child process started at its simulated `start` with
// rdmasim's libibverbs.so.1 preloaded (programs/shim/), attached by a
// socketpair (programs/protocol.hpp). Every intercepted call is a request
// that rdmasim handles at the program's simulated time, on its host's CPU
// model and verbs device; between a reply and the next request the program
// runs while the engine waits for it, so exactly one thing runs at a time
// and a run is deterministic. A poll that finds nothing is answered when a
// completion arrives (the program spun meanwhile); socket calls go to the
// hosts' kernel TCP where the fabric carries IPv4, else to a modelled side
// channel (programs/oob_sockets.hpp).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/engine.hpp"
#include "core/task.hpp"

namespace rdmasim {

struct Network;
struct BuiltFabric;
class OobSockets;
struct ProgramConfig;

class ProgramsRun {
 public:
  // `dir`: the output folder (programs/ under it gets each program's output).
  ProgramsRun(Network& net, const BuiltFabric& fabric, const std::filesystem::path& dir);
  // Kills and reaps every program still running: none outlives rdmasim.
  ~ProgramsRun();
  ProgramsRun(const ProgramsRun&) = delete;
  ProgramsRun& operator=(const ProgramsRun&) = delete;

  // Schedules each program's start.
  void start();
  // Every program has ended (or there are none).
  bool finished() const;
  // Ends the run's programs: those still running are killed and reported
  // with `why` (the stop time, or nothing left to simulate).
  void end(const std::string& why);
  // results.json's `programs`.
  nlohmann::json results() const;

  struct Program;

 private:
  Task serve(Program& p);
  Task handle(Program& p, bool& keep);
  Task socket_recv(Program& p, std::vector<char>& out, int64_t& ret);
  void launch(Program& p);
  void reap(Program& p, bool kill_it);

  Network& net_;
  std::filesystem::path dir_;
  std::unique_ptr<OobSockets> oob_;
  std::vector<std::unique_ptr<Program>> programs_;
  std::string shim_dir_;
};

// Where the preloaded library is: lib/rdmasim/ beside the rdmasim binary
// (a build tree), or ../lib/rdmasim/ (an installation).
std::string shim_directory();

// The summary's lines for results.json's `programs` (empty when there are none).
std::string format_programs_summary(const nlohmann::json& results);
// Why the run failed because of a program, or empty.
std::string program_failure(const nlohmann::json& results);

}  // namespace rdmasim
