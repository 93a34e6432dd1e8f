#include "fabrics/network.hpp"

#include <stdexcept>

namespace rdmasim {

namespace {

NicConfig nic_config(const HostConfig& h) {
  NicConfig n;
  n.pcie_latency = h.pcie.latency;
  n.doorbell = h.doorbell;
  n.max_inline = h.max_inline;
  return n;
}

void wire_links(Network& net, const Fabric& fabric) {
  const auto& links = net.cfg.topology.links;
  std::vector<int> used(net.hosts.size(), 0);
  for (size_t l = 0; l < links.size(); ++l) {
    const Graph::Link& gl = net.graph.link(static_cast<int>(l));
    auto port_of = [&](int node) -> Port& {
      if (net.graph.is_host(node)) {
        // The loader refuses a second link to a host (a host has one NIC port).
        if (used[node]++)
          throw std::logic_error("host '" + net.graph.name(node) + "' has more than one link");
        return net.nodes[node]->port(0);
      }
      return net.nodes[node]->add_port();
    };
    Port& a = port_of(gl.a);
    Port& b = port_of(gl.b);
    const LinkConfig& c = links[l].config;
    LinkParams p;
    p.rate = c.bandwidth;
    p.delay = c.delay;
    p.buffer_bytes = c.buffer.count();
    p.loss = c.loss;
    p.wire_overhead = fabric.wire_overhead();
    p.min_frame = fabric.min_frame();
    Port::connect(a, b, p, net.cfg.seed ^ (0x9E3779B97F4A7C15ull * (l + 1)));
    net.links.push_back({&a, &b});
  }
}

}  // namespace

BuiltFabric build_network(Network& net, const Fabric& fabric, const std::function<void()>& before_finish) {
  const ExperimentConfig& cfg = net.cfg;
  net.nodes.resize(net.graph.size());
  const NicConfig nic = nic_config(cfg.host);
  for (int h = 0; h < net.graph.host_count(); ++h) {
    auto host = std::make_unique<Host>(net.sim, net.pool, net.graph.name(h), nic, cfg.host);
    net.hosts.push_back(host.get());
    net.nodes[h] = std::move(host);
  }
  fabric.create_nodes(net);
  // Each node keys its own events (core/engine.hpp), by its graph index.
  for (size_t n = 0; n < net.nodes.size(); ++n) net.nodes[n]->set_context(static_cast<Context>(n + 1));
  wire_links(net, fabric);
  if (before_finish) before_finish();
  BuiltFabric built = fabric.finish(net);
  built.mtu = path_mtu(cfg);
  if (fabric.iba_mtu()) {
    const uint32_t mtu = built.mtu;
    const ibv_mtu active = mtu >= 4096   ? IBV_MTU_4096
                           : mtu >= 2048 ? IBV_MTU_2048
                           : mtu >= 1024 ? IBV_MTU_1024
                           : mtu >= 512  ? IBV_MTU_512
                                         : IBV_MTU_256;
    for (Host* h : net.hosts) h->nic().set_active_mtu(active);
  }
  return built;
}

}  // namespace rdmasim
