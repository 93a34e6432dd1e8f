// What the IBA fabrics (ib, roce_v1, roce_v2) share as fabrics
// (fabrics/fabric.hpp): the IBA path MTUs and what each IBA service type
// can carry.
#pragma once

#include "fabrics/fabric.hpp"

namespace rdmasim {

class IbaNet : public Fabric {
 public:
  std::string mtu_error(uint32_t mtu) const override;
  bool check_workload(ExperimentDraft& d, const WorkloadConfig& w, const WorkloadSites& at) const override;
  std::string recovery_error(LossRecovery r) const override;
};

}  // namespace rdmasim
