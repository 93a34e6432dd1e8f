#include "workloads/workload_kind.hpp"

namespace rdmasim {

void Workload::validate(ExperimentDraft&, size_t) const {}

bool Workload::spans_ranks(const WorkloadConfig&, const ExperimentConfig&) const { return false; }

std::map<std::string, std::string> Workload::outputs(const ExperimentConfig&, const nlohmann::json&,
                                                     const std::vector<const WorkloadRun*>&, Time) const {
  return {};
}

}  // namespace rdmasim
