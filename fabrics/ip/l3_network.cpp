// IP networks (roce_v2, iwarp): L3 switches with ECMP routes to every host
// address, and the hosts' addressing plan.
#include "fabrics/ip/l3_network.hpp"

#include "fabrics/ethernet/pfc.hpp"
#include "fabrics/ip/l3_switch.hpp"
#include "fabrics/ip/wire/tcp.hpp"

namespace rdmasim {

// Addressing plan: host i is 10.x.y.z (= 10.0.0.0 + i + 1) and fd00::i+1;
// its MAC is 02:00:00:00:xx:xx; switch n's port p has 02:00:01:nn:nn:pp
// (MacAddress::switch_port: above port 255, 02:8n:nn:nn:pp:pp).
IpEndpoint host_endpoint(int i) {
  IpEndpoint e;
  const uint32_t n = static_cast<uint32_t>(i + 1);
  e.mac = MacAddress::local(n);
  e.ipv4 = Ipv4Address::from_u32(0x0A000000u + n);
  e.ipv6.octets[0] = 0xFD;
  e.ipv6.octets[13] = static_cast<uint8_t>(n >> 16);  // a k = 64 fat tree's last host is the 65,536th
  e.ipv6.octets[14] = static_cast<uint8_t>(n >> 8);
  e.ipv6.octets[15] = static_cast<uint8_t>(n);
  return e;
}
bool is_ipv4_tcp(std::span<const std::byte> frame) {
  auto eth = ConstEthernetView::check(frame);
  auto ip = eth && eth->ethertype() == ethertype::kIpv4 ? ConstIpv4View::check(eth->payload()) : std::nullopt;
  return ip && ip->valid() && ip->protocol() == kIpProtoTcp;
}

bool fill_ipv4_tcp_checksum(std::span<std::byte> frame) {
  if (!is_ipv4_tcp(frame)) return false;
  auto ip = ConstIpv4View::check(frame.subspan(EthernetHeader::kLen));
  tcp_fill_checksum(
      frame.subspan(EthernetHeader::kLen + ip->header_len(), ip->total_length() - ip->header_len()),
      TcpPseudoHeader::of(*ip));
  return true;
}

namespace {
uint32_t switch_mac_base(int node) { return 0x01000000u + (static_cast<uint32_t>(node) << 8); }
}  // namespace

// The Ethernet MAC of a node's port, for neighbours to address.
static MacAddress port_mac(Network& net, int node, uint16_t port) {
  if (net.graph.is_host(node)) return host_endpoint(node).mac;
  return static_cast<L3Switch&>(*net.nodes[node]).port_mac(port);
}

void build_l3_switches(Network& net) {
  const ExperimentConfig& cfg = net.cfg;
  for (int n = net.graph.host_count(); n < net.graph.size(); ++n)
    net.nodes[n] = std::make_unique<L3Switch>(net.sim, net.graph.name(n), switch_mac_base(n),
                                              cfg.switch_config, cfg.ecn, cfg.seed);
}

// Routes, neighbour MACs; returns each host's endpoint.
std::vector<IpEndpoint> finish_l3(Network& net) {
  const Graph& g = net.graph;
  const HostPaths& paths = net.paths();
  // Consecutive hosts with the same neighbours (a leaf's: the topologies
  // number them together) have one route at every other switch, to the
  // range of their addresses; their next hops are computed once per set of
  // neighbours (HostPaths::attachment) a switch, and per host only at a
  // switch they hang off. A k = 64 fat tree's switch: 2,048 ranges for
  // 65,536 hosts.
  struct HostRun {
    int first, last;
  };
  std::vector<HostRun> runs;
  for (int h = 0; h < g.host_count(); ++h) {
    if (!runs.empty() && paths.attachment(runs.back().last) == paths.attachment(h))
      runs.back().last = h;
    else
      runs.push_back({h, h});
  }
  std::vector<uint16_t> ports;
  constexpr uint32_t kNotYet = UINT32_MAX;
  std::vector<uint32_t> set_of(paths.attachments());  // by attachment, at this switch
  for (int n = g.host_count(); n < g.size(); ++n) {
    auto& sw = static_cast<L3Switch&>(*net.nodes[n]);
    for (size_t p = 0; p < g.ports(n).size(); ++p) {  // a star's switch has 65,536 ports: not uint16_t
      const auto& port = g.ports(n)[p];
      sw.set_neighbor(static_cast<uint16_t>(p), port_mac(net, port.peer, port.peer_port));
    }
    std::fill(set_of.begin(), set_of.end(), kNotYet);
    for (const HostRun& r : runs) {
      if (paths.adjacent(n, r.first)) {
        for (int h = r.first; h <= r.last; ++h) {
          paths.next_hops(n, h, ports);
          const uint32_t set = sw.ecmp_set(ports);
          const IpEndpoint e = host_endpoint(h);
          sw.add_route(e.ipv4, set);
          sw.add_route(e.ipv6, set);
        }
        continue;
      }
      uint32_t& set = set_of[static_cast<size_t>(paths.attachment(r.first))];
      if (set == kNotYet) {
        paths.next_hops(n, r.first, ports);
        set = sw.ecmp_set(ports);
      }
      const IpEndpoint first = host_endpoint(r.first), last = host_endpoint(r.last);
      sw.add_route(first.ipv4, last.ipv4, set);
      sw.add_route(first.ipv6, last.ipv6, set);
    }
    sw.routes_done();
    if (net.cfg.ecn.enabled && net.cfg.ecn.at == EcnAt::dequeue) sw.enable_dequeue_marking();
  }
  std::vector<IpEndpoint> eps;
  for (int h = 0; h < g.host_count(); ++h) {
    IpEndpoint e = host_endpoint(h);
    if (!g.ports(h).empty()) e.gateway_mac = port_mac(net, g.ports(h)[0].peer, g.ports(h)[0].peer_port);
    eps.push_back(e);
  }
  return eps;
}

void enable_l3_pfc(Network& net, const std::vector<IpEndpoint>& eps) {
  enable_pfc(net, [&net, &eps](int n, uint16_t p) {
    return net.graph.is_host(n) ? eps[n].mac : static_cast<L3Switch&>(*net.nodes[n]).port_mac(p);
  });
}

ibv_ah_attr ip_address(Host& from, Host& to) {
  (void)from;
  ibv_ah_attr ah{};
  ah.is_global = 1;
  ah.port_num = 1;
  ah.grh.dgid = to.nic().gid();
  ah.grh.hop_limit = 64;
  return ah;
}

// The experiment's `tcp:` section as the TCP model's endpoint options.
TcpEndpointConfig tcp_endpoint_config(const ExperimentConfig& cfg, uint32_t ip_mtu) {
  TcpEndpointConfig t;
  t.mtu = ip_mtu;
  t.congestion_control = cfg.tcp.congestion_control;
  t.initial_cwnd_segments = cfg.tcp.initial_cwnd;
  t.min_rto = cfg.tcp.min_rto;
  if (t.initial_rto < t.min_rto) t.initial_rto = t.min_rto;
  t.delayed_acks = cfg.tcp.delayed_ack > Time{};
  if (t.delayed_acks) t.delayed_ack = cfg.tcp.delayed_ack;
  t.ecn = cfg.ecn.enabled;  // ECN-marking switches: negotiate ECN (DCTCP turns it on anyway)
  return t;
}

}  // namespace rdmasim
