// A feature that takes part in a run beside the workloads (a `programs:`
// section driving external processes, say) without editing the runner:
// one factory in workloads/run_extensions.cpp, asked once per run, returns
// an extension when the experiment uses the feature. The runner calls its
// hooks in this order (apps/runner.cpp):
//   start          after the workloads have started, before the event loop;
//   before_advance before the engine runs on to `upto`: returns how far it
//                  may run (at most `upto`; it may first wait for what it
//                  drives, which is how a feature gates the event loop);
//   finished       with the workloads': the run drains once all say yes;
//   after_run      when the event loop has ended;
//   results        adds its own top-level keys to results.json.
// With no extension the run is what it was: the hooks add no events.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "core/units.hpp"
#include "topologies/config.hpp"

namespace rdmasim {

struct WorkloadEnv;  // workloads/workload.hpp

class RunExtension {
 public:
  virtual ~RunExtension() = default;
  virtual void start() {}
  virtual Time before_advance(Time /*now*/, Time upto) { return upto; }
  virtual bool finished() const { return true; }
  virtual void after_run() {}
  virtual void results(nlohmann::json& /*out*/) const {}
};

// Null when the experiment does not use the feature.
using RunExtensionFactory = std::unique_ptr<RunExtension> (*)(const ExperimentConfig&, WorkloadEnv&);

// Every feature's factory, in the order their hooks run.
const std::vector<RunExtensionFactory>& run_extension_factories();
// The extensions of this run.
std::vector<std::unique_ptr<RunExtension>> make_run_extensions(const ExperimentConfig& cfg, WorkloadEnv& env);

}  // namespace rdmasim
