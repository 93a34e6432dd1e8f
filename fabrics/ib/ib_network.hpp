// The ib fabric (fabrics/fabric.hpp): native InfiniBand. Its builder
// (ib_network.cpp) makes IB switches, credit-based flow control on every
// link and a subnet manager; its sections and checks are in ib_sections.cpp.
#pragma once

#include "fabrics/iba/iba_network.hpp"

namespace rdmasim {

class IbNet final : public IbaNet {
 public:
  std::string_view name() const override { return "ib"; }
  std::vector<SectionType> sections() const override;
  std::string cc_error(CcAlgorithm a) const override;
  MemoryCosts memory_costs() const override {
    MemoryCosts c;
    c.forwarding_entry_bytes = sizeof(int16_t);  // IbSwitch's LFT
    return c;
  }
  std::string_view routers_error() const override;
  bool reaches_all(const ExperimentConfig& x, Paths& paths, const std::vector<int>& from,
                   const std::vector<int>& to) const override;
  std::string pair_error(const ExperimentConfig& x, Paths& paths, int a, int b) const override;
  void validate(ExperimentDraft& d) const override;

  uint32_t wire_overhead() const override;
  uint32_t min_frame() const override { return 0; }  // an IB packet is as long as its headers
  uint32_t data_frame_headers(const ExperimentConfig&) const override {
    return 8 + kBth + kIcrc + 2;
  }  // LRH, VCRC
  void create_nodes(Network& net) const override;
  BuiltFabric finish(Network& net) const override;
  CostFamilies cost_families() const override { return {"ib", "ib", "ib"}; }
};

}  // namespace rdmasim
