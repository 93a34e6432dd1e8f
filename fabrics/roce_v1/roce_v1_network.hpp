// The roce_v1 fabric (fabrics/fabric.hpp): RoCE v1 on bridged Ethernet.
// Its builder is roce_v1_network.cpp; `vlan:` and its reachability rules
// (frames never leave their broadcast domain) are roce_v1_sections.cpp.
#pragma once

#include "fabrics/iba/iba_network.hpp"

namespace rdmasim {

class RoceV1Net final : public IbaNet {
 public:
  std::string_view name() const override { return "roce_v1"; }
  std::vector<SectionType> sections() const override;
  std::string cc_error(CcAlgorithm a) const override;
  std::string scope_error(const ExperimentConfig& x, const WorkloadConfig& w) const override;
  bool reaches_all(const ExperimentConfig& x, Paths& paths, const std::vector<int>& from,
                   const std::vector<int>& to) const override;
  std::string pair_error(const ExperimentConfig& x, Paths& paths, int a, int b) const override;

  uint32_t data_frame_headers(const ExperimentConfig&) const override {
    return kEthernetHeader + kGrh + kBth + kIcrc;
  }
  // The neighbour cache and the bridges' tables; RFC 4861 7.2.2: each end
  // solicits its peer's MAC at the solicited-node multicast address, which
  // a bridge floods out of every port (no MLD snooping).
  MemoryCosts memory_costs() const override { return {24 * 1024, 0, {}, true}; }
  void create_nodes(Network& net) const override;
  BuiltFabric finish(Network& net) const override;
  CostFamilies cost_families() const override { return {"roce", "ethernet", "ethernet"}; }
};

}  // namespace rdmasim
