#include "workloads/workload_kind.hpp"

namespace rdmasim {

void Workload::validate(ExperimentDraft&, size_t) const {}

bool Workload::spans_ranks(const WorkloadConfig&, const ExperimentConfig&) const { return false; }

}  // namespace rdmasim
