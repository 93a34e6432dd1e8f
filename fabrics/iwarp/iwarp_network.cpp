// Builds an iWARP network: the IP network of fabrics/ip/l3_network.hpp
// (the same L3 switches as roce_v2), hosts whose RNICs run RDMAP/DDP/MPA
// over TCP (iwarp_fabric.hpp).
#include <algorithm>
#include <cstring>
#include <memory>

#include "fabrics/ethernet/pfc.hpp"
#include "fabrics/ip/l3_network.hpp"
#include "fabrics/ip/l3_switch.hpp"
#include "fabrics/iwarp/iwarp_fabric.hpp"
#include "fabrics/network.hpp"

namespace rdmasim {

namespace {

ibv_gid gid_of(IpVersion v, const IpEndpoint& e) {
  const Ipv6Address a = v == IpVersion::ipv4 ? Ipv6Address::v4_mapped(e.ipv4) : e.ipv6;
  ibv_gid g;
  std::memcpy(g.raw, a.octets.data(), 16);
  return g;
}

}  // namespace

FabricBuilder iwarp_builder() {
  return {build_l3_switches, [](Network& net) {
            const ExperimentConfig& cfg = net.cfg;
            const auto eps = finish_l3(net);
            uint32_t mtu = cfg.link.mtu;  // the IP MTU of the path: the smallest of any link
            for (const auto& l : cfg.topology.links) mtu = std::min(mtu, l.config.mtu);
            auto streams = std::make_shared<MpaStreamRegistry>();
            IwarpNicConfig nc;
            nc.ip = cfg.ip;
            nc.tcp = tcp_endpoint_config(cfg, mtu);
            nc.mpa_crc = cfg.mpa.crc;
            nc.mpa_markers = cfg.mpa.markers;
            nc.mpa_revision = cfg.mpa.revision;
            nc.listen_port = cfg.tcp.listen_port;
            nc.priority = cfg.pfc ? cfg.pfc_config.priority : 0;
            nc.seed = cfg.seed;
            nc.streams = streams;
            for (int h = 0; h < net.graph.host_count(); ++h) {
              Rnic& nic = net.host(h).nic();
              nc.self = eps[h];
              nic.set_fabric(std::make_unique<IwarpFabric>(nic, nc));
              nic.set_gid(gid_of(cfg.ip, eps[h]));
            }
            if (cfg.pfc)  // 802.1Qbb on every port, as roce_v2 (fabrics/ethernet/pfc.hpp)
              enable_l3_pfc(net, eps);
            net.sealer = [streams](Packet& p) { seal_iwarp(p, *streams); };
            net.address = ip_address;
          }};
}

}  // namespace rdmasim
