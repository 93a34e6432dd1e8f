// Builds a `tcp` network: the IP network of fabrics/ip/l3_network.hpp (the
// same L3 switches as roce_v2 and iwarp), hosts with plain Ethernet NICs
// whose frames go through the kernel stack (kernel_nic.hpp).
#include "fabrics/tcp/tcp_network.hpp"

#include "fabrics/ethernet/ethernet_sections.hpp"
#include "fabrics/ip/ip_section.hpp"
#include "fabrics/ip/l3_network.hpp"
#include "fabrics/ip/tcp/tcp_section.hpp"
#include "fabrics/network.hpp"
#include "fabrics/tcp/kernel_nic.hpp"

namespace rdmasim {

std::vector<SectionType> TcpNet::sections() const {
  std::vector<SectionType> s = ethernet_sections();
  s.push_back(ip_section());
  s.push_back(tcp_section());
  return s;
}

std::string TcpNet::mtu_error(uint32_t mtu) const {
  if (mtu >= kMinIpMtu && mtu <= kMaxIpMtu) return {};
  return "tcp needs an IP MTU from 576 to 9000, got " + std::to_string(mtu);
}

// The workload reader refuses RDMA kinds on a fabric without RDMA before it
// asks; what remains (udp, compute) checks itself.
bool TcpNet::check_workload(ExperimentDraft&, const WorkloadConfig&, const WorkloadSites&) const { return true; }

std::string TcpNet::completion_error(Completion m) const {
  if (m != Completion::polling && m != Completion::hybrid) return {};
  return "the kernel stack (fabric: tcp) receives by interrupt (one per frame, or per coalesced batch) or napi; " +
         std::string(to_string(m)) + " is how RDMA programs wait on a CQ";
}

void TcpNet::create_nodes(Network& net) const { build_l3_switches(net); }

BuiltFabric TcpNet::finish(Network& net) const {
  const auto eps = finish_l3(net);
  for (int h = 0; h < net.graph.host_count(); ++h) {
    Host& host = net.host(h);
    host.nic().set_fabric(std::make_unique<KernelNic>(host, eps[h]));
  }
  if (net.cfg.pfc) enable_l3_pfc(net, eps);
  BuiltFabric built;
  built.sealer = [](Packet&) {};  // checksums are written when a frame is built
  built.address = ip_address;
  return built;
}

const Fabric& tcp_fabric() {
  static const TcpNet f;
  return f;
}

}  // namespace rdmasim
