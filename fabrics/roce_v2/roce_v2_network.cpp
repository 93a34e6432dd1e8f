// Builds a RoCE v2 network: the IP network of fabrics/ip/l3_network.hpp,
// hosts with the RoCE v2 encapsulation.

#include "fabrics/ip/l3_network.hpp"
#include "fabrics/ip/l3_switch.hpp"
#include "fabrics/network.hpp"
#include "fabrics/roce_v2/roce_v2_fabric.hpp"

namespace rdmasim {

FabricBuilder roce_v2_builder() {
  return {build_l3_switches, [](Network& net) {
            const ExperimentConfig& cfg = net.cfg;
            const auto eps = finish_l3(net);
            const uint8_t priority = cfg.pfc ? cfg.pfc_config.priority : 0;
            for (int h = 0; h < net.graph.host_count(); ++h) {
              Rnic& nic = net.host(h).nic();
              auto fabric = std::make_unique<RoceV2Fabric>(nic, cfg.ip, eps[h], priority, cfg.ecn.enabled);
              fabric->set_congestion_control(&cfg.cc);
              fabric->set_loss_recovery(cfg.loss_recovery, &cfg.irn);
              nic.set_fabric(std::move(fabric));
              nic.set_gid(roce_v2_gid(cfg.ip, eps[h]));
            }
            if (cfg.cc.algorithm == CcAlgorithm::hpcc)
              for (int n = net.graph.host_count(); n < net.graph.size(); ++n)
                static_cast<L3Switch&>(*net.nodes[n]).enable_telemetry();
            if (cfg.pfc)  // 802.1Qbb on every port (fabrics/ethernet/pfc.hpp)
              enable_l3_pfc(net, eps);
            net.sealer = seal_roce_v2;
            net.address = ip_address;
          }};
}

}  // namespace rdmasim
