// Builds a RoCE v1 network: L2 bridges for the topology's switches, with
// the ports the spanning tree blocks blocked; L3 switches without routes for
// its routers (they forward only IP, so RoCE v1 frames never cross one and
// each side is its own broadcast domain); hosts with the RoCE v1
// encapsulation; PFC on every port with flow_control: pfc.
#include "fabrics/roce_v1/roce_v1_network.hpp"

#include <memory>
#include <stdexcept>

#include "core/errors.hpp"
#include "fabrics/ethernet/l2_bridge.hpp"
#include "fabrics/ethernet/pfc.hpp"
#include "fabrics/ip/l3_switch.hpp"
#include "fabrics/network.hpp"
#include "fabrics/roce_v1/roce_v1_fabric.hpp"

namespace rdmasim {

namespace {
// Addressing plan, the same as the IP fabrics' (fabrics/ip/l3_network.hpp):
// host i has MAC 02:00:00:00:xx:xx (= i + 1); a switch or router n has
// 02:00:01:nn:nn:pp on port p (MacAddress::switch_port: above port 255,
// 02:8n:nn:nn:pp:pp).
MacAddress host_mac(int h) { return MacAddress::local(static_cast<uint32_t>(h + 1)); }
uint32_t switch_mac_base(int node) { return 0x01000000u + (static_cast<uint32_t>(node) << 8); }

MacAddress port_mac(const Network& net, int node, uint16_t port) {
  if (net.graph.is_host(node)) return host_mac(node);
  return MacAddress::switch_port(switch_mac_base(node), port);
}

RoceV1Fabric& fabric_of(Host& h) { return static_cast<RoceV1Fabric&>(h.nic().fabric()); }

}  // namespace

void RoceV1Net::create_nodes(Network& net) const {
  const ExperimentConfig& cfg = net.cfg;
  for (int n = net.graph.host_count(); n < net.graph.size(); ++n) {
    if (net.graph.kind(n) == NodeKind::router)
      net.nodes[n] = std::make_unique<L3Switch>(net.sim, net.graph.name(n), switch_mac_base(n),
                                                cfg.switch_config, cfg.ecn, cfg.seed);
    else
      net.nodes[n] =
          std::make_unique<L2Bridge>(net.sim, net.graph.name(n), switch_mac_base(n), cfg.switch_config);
  }
}

BuiltFabric RoceV1Net::finish(Network& net) const {
  const ExperimentConfig& cfg = net.cfg;
  const Graph& g = net.graph;
  auto st = std::make_shared<const SpanningTree>(spanning_tree(g));
  for (int l = 0; l < g.link_count(); ++l) {
    if (!st->blocked[l]) continue;
    const Graph::Link& link = g.link(l);
    if (auto* b = dynamic_cast<L2Bridge*>(net.nodes[link.a].get())) b->set_blocked(link.port_a, true);
    if (auto* b = dynamic_cast<L2Bridge*>(net.nodes[link.b].get())) b->set_blocked(link.port_b, true);
  }

  // The priority of RDMA frames: PFC's when it is on (the tag must carry
  // it), else the VLAN's PCP. PFC without a VLAN tags frames with VID 0 so
  // that the PCP is on the wire.
  const uint8_t priority = cfg.pfc ? cfg.pfc_config.priority : cfg.vlan ? cfg.vlan->pcp : 0;
  std::optional<uint16_t> vid;
  if (cfg.vlan)
    vid = cfg.vlan->id;
  else if (cfg.pfc)
    vid = 0;
  for (int h = 0; h < g.host_count(); ++h) {
    Rnic& nic = net.host(h).nic();
    const std::optional<uint16_t> host_vid =
        cfg.vlan ? std::optional<uint16_t>(cfg.vlan->of(g.name(h))) : vid;
    const RoceV1Port self{host_mac(h), roce_v1_gid(host_mac(h)), priority, host_vid};
    auto fabric = std::make_unique<RoceV1Fabric>(nic, self);
    fabric->set_congestion_control(&net.cfg.cc);
    nic.set_fabric(std::move(fabric));
    nic.set_gid(to_ibv_gid(self.gid));
    // The bridge port facing the host is an access port of the host's VLAN.
    if (cfg.vlan && !g.ports(h).empty()) {
      const auto& up = g.ports(h)[0];
      if (auto* b = dynamic_cast<L2Bridge*>(net.nodes[up.peer].get()))
        b->set_access_vlan(up.peer_port, *host_vid);
    }
  }

  if (cfg.pfc) {
    const auto pfc = enable_pfc(net, [&net](int n, uint16_t p) { return port_mac(net, n, p); });
    for (int n = g.host_count(); n < g.size(); ++n)
      if (auto* b = dynamic_cast<L2Bridge*>(net.nodes[n].get()))
        b->on_discard([node = pfc[n]](const Packet& p) { node->discarded(p); });
  }

  BuiltFabric built;
  built.sealer = seal_roce_v1;
  built.address = [&net, st](Host& from, Host& to) {
    const int a = net.host_index(from), b = net.host_index(to);
    // A16: RoCE v1 is not routable. The loader refuses what the YAML shows;
    // this is the connect error for anything else.
    const bool other_vlan = net.cfg.vlan && net.cfg.vlan->of(from.name()) != net.cfg.vlan->of(to.name());
    if (a < 0 || b < 0 || other_vlan || !st->domains.same_domain(a, b))
      throw InputError("roce_v1: " + from.name() + " cannot reach " + to.name() +
                       ": they are in different broadcast domains and RoCE v1 frames cannot be routed "
                       "(rdma_resolve_addr fails with EHOSTUNREACH); use roce_v2 or put them on one L2 "
                       "network");
    // rdma_resolve_addr: neighbour discovery starts now, not at the first frame.
    const Gid dgid = from_ibv_gid(to.nic().gid());
    fabric_of(from).resolve(dgid);
    ibv_ah_attr ah{};
    ah.is_global = 1;
    ah.port_num = 1;
    ah.grh.dgid = to_ibv_gid(dgid);
    ah.grh.hop_limit = 64;
    return ah;
  };
  return built;
}

const Fabric& roce_v1_fabric() {
  static const RoceV1Net f;
  return f;
}

}  // namespace rdmasim
