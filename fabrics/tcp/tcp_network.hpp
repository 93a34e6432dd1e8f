// The tcp fabric (fabrics/fabric.hpp): no RDMA, the kernel's network stack
// on plain Ethernet NICs, the baseline the RDMA fabrics are compared with.
// Its builder (tcp_network.cpp) makes the IP network of
// fabrics/ip/l3_network.hpp with a KernelNic (kernel_nic.hpp) in each host.
#pragma once

#include "fabrics/fabric.hpp"

namespace rdmasim {

class TcpNet final : public Fabric {
 public:
  std::string_view name() const override { return "tcp"; }
  HostNic host_nic() const override { return {.verbs = false, .sockets = true, .dpdk = true}; }
  // Between the kernel and RDMA: the same NICs under a user-space stack.
  std::vector<Variant> variants() const override { return {{"dpdk", "host.stack=dpdk"}}; }
  // TCP's windows keep more of a sender's frames in the network than DCQCN (as on iwarp).
  MemoryCosts memory_costs() const override {
    MemoryCosts c;
    c.in_flight_bytes = 96 * 1024;
    return c;
  }
  std::vector<SectionType> sections() const override;
  std::string mtu_error(uint32_t mtu) const override;
  std::string cc_error(CcAlgorithm a) const override;
  std::string recovery_error(LossRecovery r) const override;
  bool check_workload(ExperimentDraft& d, const WorkloadConfig& w, const WorkloadSites& at) const override;
  bool rnr_naks() const override { return false; }
  // The kernel receives by interrupt or NAPI (NAPI by default, as Linux).
  Completion default_completion() const override { return Completion::napi; }
  std::string completion_error(Completion m) const override;

  uint32_t data_frame_headers(const ExperimentConfig& x) const override {
    return kEthernetHeader + ip_header(x) + kTcpHeader;
  }
  void create_nodes(Network& net) const override;
  BuiltFabric finish(Network& net) const override;
  bool iba_mtu() const override { return false; }
  CostFamilies cost_families() const override { return {"ethernet", "ethernet", "ethernet"}; }
};

}  // namespace rdmasim
