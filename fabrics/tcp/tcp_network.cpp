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
            const TcpEndpointConfig tcp = tcp_endpoint_config(net.cfg, path_mtu(net.cfg));
            for (int h = 0; h < net.graph.host_count(); ++h) {
              Host& host = net.host(h);
              TcpEndpointConfig mine = tcp;
              // The socket buffers bound what TCP keeps to send and what it offers.
              mine.send_buffer = static_cast<uint32_t>(host.config().kernel.sndbuf);
              mine.receive_buffer = static_cast<uint32_t>(host.config().kernel.rcvbuf);
              host.nic().set_fabric(std::make_unique<KernelNic>(host, eps[h], mine));
            }
            if (net.cfg.pfc) enable_l3_pfc(net, eps);
            net.sealer = KernelNic::seal_kernel_frame;
            net.address = ip_address;
          }};
}

}  // namespace rdmasim
