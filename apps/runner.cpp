#include "apps/runner.hpp"

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace rdmasim {

nlohmann::json run_experiment(const ExperimentConfig&, const std::filesystem::path&) {
  throw std::logic_error("the runner is not built yet");
}

}  // namespace rdmasim
