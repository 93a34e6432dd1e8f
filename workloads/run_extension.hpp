// A feature that takes part in a run beside the workloads (a top-level
// section such as `programs:`, driving external processes) without editing
// the Run: the feature's folder implements RunExtension, and one line in
// apps/run_extensions.cpp (the top layer, which sees every feature) lists
// its factory. Asked once per run, the factory returns an extension when
// the experiment uses the feature. The Run (apps/runner.hpp) calls its hooks
// in this order:
//   start          after the workloads have started, before the event loop;
//   before_advance before the engine runs on to `upto`: returns how far it
//                  may run (at most `upto`; it may first wait for what it
//                  drives, which is how a feature gates the event loop);
//   finished       with the workloads': the run drains once all say yes;
//   after_run      when the event loop has ended, with how it ended;
//   results        adds its own top-level keys to results.json.
// The extension is destroyed after the engine's pending events are (so
// after any coroutine of its own). With no extension the run is what it
// was: the hooks add no events.
#pragma once

#include <filesystem>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string_view>

#include "core/units.hpp"
#include "topologies/config.hpp"

namespace rdmasim {

struct Network;      // fabrics/network.hpp
struct BuiltFabric;  // fabrics/fabric.hpp
struct WorkloadEnv;  // workloads/workload.hpp

// What an extension may use of the run it takes part in.
struct RunContext {
  const ExperimentConfig& cfg;
  Network& net;
  const BuiltFabric& fabric;
  WorkloadEnv& env;                  // what the workloads were given
  const std::filesystem::path& dir;  // the output folder (staged: it replaces DIR whole)
  bool split;                        // the run is split over MPI ranks
};

class RunExtension {
 public:
  virtual ~RunExtension() = default;
  virtual void start() {}
  virtual Time before_advance(Time /*now*/, Time upto) { return upto; }
  virtual bool finished() const { return true; }
  // `reason`: results.json's end.reason (idle, stop, done, stalled).
  virtual void after_run(std::string_view /*reason*/) {}
  virtual void results(nlohmann::json& /*out*/) const {}
};

// Null when the experiment does not use the feature; throws InputError
// when it cannot take part in this run (one split over ranks, say).
using RunExtensionFactory = std::unique_ptr<RunExtension> (*)(const RunContext&);

}  // namespace rdmasim
