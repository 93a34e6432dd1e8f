// The roce_v2 fabric (fabrics/fabric.hpp): RoCE v2 over routed IP. Its
// builder is roce_v2_network.cpp; it reads the Ethernet sections, `ip:`
// and `dcqcn:` (dcqcn_section.cpp).
#pragma once

#include "fabrics/iba/iba_network.hpp"

namespace rdmasim {

class RoceV2Net final : public IbaNet {
 public:
  std::string_view name() const override { return "roce_v2"; }
  std::vector<SectionType> sections() const override;
  std::string cc_error(CcAlgorithm a) const override;
  std::string recovery_error(LossRecovery) const override { return {}; }  // IRN's header in an IPv4 option
  void validate(ExperimentDraft& d) const override;

  uint32_t data_frame_headers(const ExperimentConfig& x) const override {
    return kEthernetHeader + ip_header(x) + kUdpHeader + kBth + kIcrc;
  }
  void create_nodes(Network& net) const override;
  BuiltFabric finish(Network& net) const override;
  CostFamilies cost_families() const override { return {"roce", "ethernet", "ethernet"}; }
};

// `dcqcn:`, congestion control at RoCE v2 NICs.
SectionType dcqcn_section();

}  // namespace rdmasim
