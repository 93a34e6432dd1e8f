#include "workloads/run_extension.hpp"

namespace rdmasim {

const std::vector<RunExtensionFactory>& run_extension_factories() {
  // A feature is its folder and a line here.
  static const std::vector<RunExtensionFactory> all{};
  return all;
}

std::vector<std::unique_ptr<RunExtension>> make_run_extensions(const ExperimentConfig& cfg,
                                                               WorkloadEnv& env) {
  std::vector<std::unique_ptr<RunExtension>> out;
  for (RunExtensionFactory make : run_extension_factories())
    if (auto e = make(cfg, env)) out.push_back(std::move(e));
  return out;
}

}  // namespace rdmasim
