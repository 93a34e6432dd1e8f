// The features that take part in a run beside the workloads
// (workloads/run_extension.hpp): each one's extension for the Run and what
// the command line says of it afterwards. A feature is its folder and one
// entry in apps/run_extensions.cpp, which sits in the top layer so that it
// may list a feature of any layer (programs/ is above workloads/).
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "workloads/run_extension.hpp"

namespace rdmasim {

struct RunFeature {
  RunExtensionFactory make;
  // Lines for the run's summary from results.json (empty: none).
  std::string (*summary)(const nlohmann::json& results);
  // Why the run failed because of the feature, from results.json, or empty.
  std::string (*failure)(const nlohmann::json& results);
};

// Every feature, in the order their hooks run.
const std::vector<RunFeature>& run_features();
// The extensions of this run.
std::vector<std::unique_ptr<RunExtension>> make_run_extensions(const RunContext& run);
// Every feature's summary lines, in order.
std::string run_features_summary(const nlohmann::json& results);
// The first feature's reason the run failed, or empty.
std::string run_features_failure(const nlohmann::json& results);

}  // namespace rdmasim
