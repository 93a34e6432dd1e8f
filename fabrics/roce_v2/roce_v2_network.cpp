// Builds a RoCE v2 network: the IP network of fabrics/ip/l3_network.hpp,
// hosts with the RoCE v2 encapsulation.

#include "fabrics/roce_v2/roce_v2_network.hpp"

#include "fabrics/ethernet/ethernet_sections.hpp"
#include "fabrics/ip/ip_section.hpp"
#include "fabrics/ip/l3_network.hpp"
#include "fabrics/ip/l3_switch.hpp"
#include "fabrics/network.hpp"
#include "fabrics/roce_v2/roce_v2_fabric.hpp"
#include "topologies/cc_algorithms.hpp"

namespace rdmasim {

std::vector<SectionType> RoceV2Net::sections() const {
  std::vector<SectionType> s = ethernet_sections();
  s.push_back(ip_section());
  return s;
}

void RoceV2Net::create_nodes(Network& net) const { build_l3_switches(net); }

BuiltFabric RoceV2Net::finish(Network& net) const {
  const ExperimentConfig& cfg = net.cfg;
  const auto eps = finish_l3(net);
  const uint8_t priority = cfg.pfc ? cfg.pfc_config.priority : 0;
  for (int h = 0; h < net.graph.host_count(); ++h) {
    Rnic& nic = net.host(h).nic();
    auto fabric = std::make_unique<RoceV2Fabric>(nic, cfg.ip, eps[h], priority, cfg.ecn.enabled,
                                                 cfg.cc.control_priority);
    fabric->set_congestion_control(&cfg.cc);
    fabric->set_loss_recovery(cfg.loss_recovery, &cfg.irn);
    nic.set_fabric(std::move(fabric));
    nic.set_gid(roce_v2_gid(cfg.ip, eps[h]));
  }
  // ACKs, NAKs and CNPs in their own class, served first at every port.
  if (cfg.cc.control_priority >= 0)
    for (auto& node : net.nodes)
      for (size_t i = 0; i < node->port_count(); ++i)
        node->port(i).set_strict_classes(static_cast<uint8_t>(1u << cfg.cc.control_priority));
  if (cc_facts(cfg.cc.algorithm).signal == CcSignal::ip_telemetry)
    for (int n = net.graph.host_count(); n < net.graph.size(); ++n)
      static_cast<L3Switch&>(*net.nodes[n]).enable_telemetry();
  if (cfg.pfc)  // 802.1Qbb on every port (fabrics/ethernet/pfc.hpp)
    enable_l3_pfc(net, eps);
  BuiltFabric built;
  built.sealer = seal_roce_v2;
  built.address = ip_address;
  return built;
}

const Fabric& roce_v2_fabric() {
  static const RoceV2Net f;
  return f;
}

}  // namespace rdmasim
