// Builds a native InfiniBand network: IB switches, credit-based flow control
// on every link, and a subnet manager that assigns LIDs and programs the
// forwarding tables at time 0.
#include "fabrics/ib/ib_network.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/errors.hpp"
#include "fabrics/ib/credit_flow_control.hpp"
#include "fabrics/ib/ib_fabric.hpp"
#include "fabrics/ib/ib_switch.hpp"
#include "fabrics/ib/subnet_manager.hpp"
#include "fabrics/network.hpp"
#include "topologies/cc_algorithms.hpp"

namespace rdmasim {

uint32_t IbNet::wire_overhead() const { return kIbWireOverhead; }

void IbNet::create_nodes(Network& net) const {
  const ExperimentConfig& cfg = net.cfg;
  for (int n = net.graph.host_count(); n < net.graph.size(); ++n) {
    if (net.graph.kind(n) != NodeKind::switch_node)
      throw InputError(cfg.file.string() + ": ib has no routers (one subnet): '" + net.graph.name(n) + "'");
    net.nodes[n] = std::make_unique<IbSwitch>(net.sim, net.graph.name(n), cfg.switch_config);
  }
}

BuiltFabric IbNet::finish(Network& net) const {
  const ExperimentConfig& cfg = net.cfg;
  const Graph& g = net.graph;
  // The loader made sure every VL's buffer holds a packet of the path MTU (IBA 7.9).
  const uint8_t vls = modelled_data_vls(cfg.ib.vls);

  const SlToVl sl2vl = SlToVl::modulo(vls);
  const int control_sl = cfg.cc.control_priority;
  for (Host* h : net.hosts) {
    auto fabric = std::make_unique<IbFabric>(h->nic(), sl2vl, control_sl);
    fabric->set_congestion_control(&net.cfg.cc);
    h->nic().set_fabric(std::move(fabric));
  }
  if (cc_facts(cfg.cc.algorithm).signal == CcSignal::ib_fecn)
    for (int n = g.host_count(); n < g.size(); ++n)
      static_cast<IbSwitch&>(*net.nodes[n]).mark_fecn_above(cfg.cc.ib_cca.threshold.count());
  for (int n = g.host_count(); n < g.size(); ++n) static_cast<IbSwitch&>(*net.nodes[n]).attach_ports();
  // The control class's VL is served before the others at every port, HCA
  // and switch alike: VL arbitration (IBA 7.6.9) with that VL alone in the
  // high-priority table and no limit on it (LimitOfHighPriority 255). The
  // validate pass made sure the data SL runs on another VL.
  if (control_sl >= 0)
    for (const auto& node : net.nodes)
      for (size_t i = 0; i < node->port_count(); ++i)
        node->port(i).set_strict_classes(static_cast<uint8_t>(1u << sl2vl(static_cast<uint8_t>(control_sl))));
  for (size_t l = 0; l < net.links.size(); ++l) {
    const Graph::Link& gl = g.link(static_cast<int>(l));
    install_credit_flow_control(net.sim, *net.links[l].a, *net.links[l].b,
                                cfg.topology.links[l].config.buffer.count(), vls, g.is_host(gl.a),
                                g.is_host(gl.b));
  }

  SubnetManager sm(g, cfg.ib);
  sm.bring_up(net.nodes);

  BuiltFabric built;
  built.linktype = cfg.capture.ib_linktype_infiniband ? Linktype::Infiniband : Linktype::Erf;
  built.sealer = seal_ib;
  const uint8_t sl = cfg.ib.sl;
  built.address = [sl](Host& from, Host& to) {
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
  return built;
}

const Fabric& ib_fabric() {
  static const IbNet f;
  return f;
}

}  // namespace rdmasim
