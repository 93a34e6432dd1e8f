// The iwarp fabric (fabrics/fabric.hpp): RDMAP/DDP/MPA over the TCP model,
// on the routed IP network roce_v2 uses. Its builder and checks are
// iwarp_network.cpp; it reads the Ethernet sections, `ip:`, `tcp:` and
// `mpa:` (mpa_section.cpp).
#pragma once

#include "fabrics/fabric.hpp"

namespace rdmasim {

class IwarpNet final : public Fabric {
 public:
  std::string_view name() const override { return "iwarp"; }
  std::vector<SectionType> sections() const override;
  std::string cc_error(CcAlgorithm a) const override;
  std::string recovery_error(LossRecovery r) const override;
  bool rnr_naks() const override { return false; }  // a SEND without a receive is an error (RFC 5040 7.1)
  std::string mtu_error(uint32_t mtu) const override;
  bool check_workload(ExperimentDraft& d, const WorkloadConfig& w, const WorkloadSites& at) const override;

  uint32_t data_frame_headers(const ExperimentConfig& x) const override;
  MemoryCosts memory_costs() const override {
    // TCP's send buffer (TcpConfig::send_buffer, RecordQueue) beyond its 18
    // KiB; TCP's windows keep more of a sender's frames in the network than
    // DCQCN does: 96 KiB a sender puts the examples and small.yaml of
    // test_memory_limit.py within their bounds (fat trees of flows at k = 4
    // and 8 peak at 300 to 400 KiB a sender: docs/performance.md).
    return {.connection_bytes = 18 * 1024,
            .connection_part = "TCP connections",
            .stream_buffer_limit = 1 << 20,
            .in_flight_bytes = 96 * 1024};
  }
  void create_nodes(Network& net) const override;
  BuiltFabric finish(Network& net) const override;
  bool iba_mtu() const override { return false; }
  CostFamilies cost_families() const override { return {"iwarp", "ethernet", "ethernet"}; }
};

// MPA (RFC 5044) options iwarp negotiates in the MPA request and reply
// (`mpa:`, mpa_section.cpp); ExperimentConfig::settings<MpaConfig>("mpa").
struct MpaConfig final : FabricSettings {
  bool markers = false;
  bool crc = true;
  uint8_t revision = 2;  // 2: RFC 6581 enhanced connection establishment; 1: RFC 5044
};
SectionType mpa_section();

}  // namespace rdmasim
