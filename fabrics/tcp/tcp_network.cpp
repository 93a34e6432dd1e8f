// Builds a `tcp` network: the IP network of fabrics/ip/l3_network.hpp (the
// same L3 switches as roce_v2 and iwarp), hosts with plain Ethernet NICs
// whose frames go through the kernel stack (kernel_nic.hpp).
#include "fabrics/ip/l3_network.hpp"
#include "fabrics/network.hpp"
#include "fabrics/tcp/kernel_nic.hpp"

namespace rdmasim {

FabricBuilder tcp_builder() {
  return {build_l3_switches, [](Network& net) {
            const auto eps = finish_l3(net);
            for (int h = 0; h < net.graph.host_count(); ++h) {
              Host& host = net.host(h);
              host.nic().set_fabric(std::make_unique<KernelNic>(host, eps[h]));
            }
            if (net.cfg.pfc) enable_l3_pfc(net, eps);
            net.sealer = [](Packet&) {};
            net.address = ip_address;
          }};
}

}  // namespace rdmasim
