// Builds a native InfiniBand network: IB switches, credit-based flow control
// on every link, and a subnet manager that assigns LIDs and programs the
// forwarding tables at time 0.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "apps/network.hpp"
#include "core/errors.hpp"
#include "fabrics/ib/ib_fabric.hpp"
#include "nodes/ib/credit_flow_control.hpp"
#include "nodes/ib/subnet_manager.hpp"
#include "nodes/switches/ib_switch.hpp"

namespace rdmasim {

namespace {

void create_ib_switches(Network& net) {
  const ExperimentConfig& cfg = net.cfg;
  net.linktype = cfg.capture.ib_linktype_infiniband ? Linktype::Infiniband : Linktype::Erf;
  net.wire_overhead = kIbWireOverhead;
  for (int n = net.graph.host_count(); n < net.graph.size(); ++n) {
    if (net.graph.kind(n) != NodeKind::switch_node)
      throw InputError(cfg.file.string() + ": ib has no routers (one subnet): '" + net.graph.name(n) +
                               "'");
    net.nodes[n] = std::make_unique<IbSwitch>(net.sim, net.graph.name(n), cfg.switch_config);
  }
}

// A VL's receive buffer must hold the largest packet, or nothing could ever
// be sent on it; a port's egress queue (the same `buffer`) takes the two
// packets an HCA keeps queued.
void check_buffers(const Network& net, uint32_t mtu, uint8_t vls) {
  const ExperimentConfig& cfg = net.cfg;
  const uint64_t need = ib_max_packet(mtu);
  for (const LinkSpec& l : cfg.topology.links) {
    const uint64_t buffer = l.config.buffer.count();
    if (buffer / vls >= need && buffer >= 2 * need) continue;
    throw InputError(
        cfg.file.string() + ":" + std::to_string(l.line) + ":" + std::to_string(l.column) + ": link " + l.a +
        " - " + l.b + ": buffer " + to_string(l.config.buffer) + " is too small for ib: each of the " +
        std::to_string(vls) + " data VLs needs room for a " + std::to_string(need) +
        "-byte packet (IBA 7.9), so at least " + to_string(Bytes(std::max<uint64_t>(need * vls, 2 * need))));
  }
}

void finish_ib(Network& net) {
  const ExperimentConfig& cfg = net.cfg;
  const Graph& g = net.graph;
  const uint8_t vls = modelled_data_vls(cfg.ib.vls);
  uint32_t mtu = cfg.link.mtu;
  for (const LinkSpec& l : cfg.topology.links) mtu = std::min(mtu, l.config.mtu);
  check_buffers(net, mtu, vls);

  const SlToVl sl2vl = SlToVl::modulo(vls);
  for (Host* h : net.hosts) h->nic().set_fabric(std::make_unique<IbFabric>(h->nic(), sl2vl));
  for (int n = g.host_count(); n < g.size(); ++n) static_cast<IbSwitch&>(*net.nodes[n]).attach_ports();
  for (size_t l = 0; l < net.links.size(); ++l) {
    const Graph::Link& gl = g.link(static_cast<int>(l));
    install_credit_flow_control(net.sim, *net.links[l].a, *net.links[l].b,
                                cfg.topology.links[l].config.buffer.count(), vls, g.is_host(gl.a),
                                g.is_host(gl.b));
  }

  SubnetManager sm(g, cfg.ib);
  sm.bring_up(net.nodes);

  net.sealer = seal_ib;
  const uint8_t sl = cfg.ib.sl;
  net.address = [sl](Host& from, Host& to) {
    (void)from;
    // A local route: DLID and SL, no GRH (IBA 8.3: the GRH is for leaving
    // the subnet); the GID is there for programs that ask for one.
    ibv_ah_attr ah{};
    ah.dlid = to.nic().lid();
    ah.sl = sl;
    ah.port_num = 1;
    ah.is_global = 0;
    ah.grh.dgid = to.nic().gid();
    ah.grh.hop_limit = 64;
    return ah;
  };
}

}  // namespace

FabricBuilder ib_builder() { return {create_ib_switches, finish_ib}; }

}  // namespace rdmasim
