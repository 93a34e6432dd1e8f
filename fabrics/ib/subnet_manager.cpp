#include "fabrics/ib/subnet_manager.hpp"

#include <cstring>
#include <deque>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "fabrics/ib/ib_switch.hpp"
#include "fabrics/iba/wire/grh.hpp"
#include "nodes/host/host.hpp"

namespace rdmasim {

ibv_gid ib_gid(uint64_t port_guid) {
  const Gid g = make_gid(kDefaultGidPrefix, port_guid);
  ibv_gid out;
  std::memcpy(out.raw, g.octets.data(), 16);
  return out;
}

SubnetManager::SubnetManager(const Graph& g, const IbConfig& cfg)
    : g_(g), cfg_(cfg), sl2vl_(SlToVl::modulo(cfg.vls)) {}

// A breadth-first sweep over the live ports (what directed-route SMPs do,
// IBA 14.2.2), checking each link against the topology the routes are
// computed on. A subnet without a path from the first host (an island) is
// swept from its own first node, as its own SM would.
void SubnetManager::sweep(std::span<const std::unique_ptr<Node>> nodes) {
  std::unordered_map<const Node*, int> index;
  for (size_t n = 0; n < nodes.size(); ++n) index.emplace(nodes[n].get(), static_cast<int>(n));
  std::vector<bool> seen(nodes.size(), false);
  discovered_.clear();
  for (size_t start = 0; start < nodes.size(); ++start) {
    if (seen[start]) continue;
    std::deque<int> todo{static_cast<int>(start)};
    seen[start] = true;
    while (!todo.empty()) {
      const int n = todo.front();
      todo.pop_front();
      discovered_.push_back(n);
      const Node& node = *nodes[n];
      if (node.port_count() != g_.ports(n).size())
        throw std::logic_error("subnet manager: " + node.name() + " has " +
                               std::to_string(node.port_count()) + " ports, the topology gives it " +
                               std::to_string(g_.ports(n).size()));
      for (size_t p = 0; p < node.port_count(); ++p) {
        const Port* peer = node.port(p).peer();
        const Graph::Port& want = g_.ports(n)[p];
        auto it = peer ? index.find(&peer->owner()) : index.end();
        if (it == index.end() || it->second != want.peer || peer->index() != want.peer_port)
          throw std::logic_error("subnet manager: port " + std::to_string(p) + " of " + node.name() +
                                 " is not wired to " + g_.name(want.peer) + " as the topology says");
        if (!seen[it->second]) {
          seen[it->second] = true;
          todo.push_back(it->second);
        }
      }
    }
  }
}

void SubnetManager::bring_up(std::span<const std::unique_ptr<Node>> nodes) {
  if (nodes.size() != static_cast<size_t>(g_.size()))
    throw std::logic_error("subnet manager: the network does not have the topology's nodes");
  sweep(nodes);

  // LIDs (IBA 4.1.3): node n gets n + 1, hosts first; GIDs from port GUIDs.
  for (int n = 0; n < g_.size(); ++n) {
    if (auto* h = dynamic_cast<Host*>(nodes[n].get())) {
      h->nic().set_lid(lid(n));
      h->nic().set_gid(ib_gid(ib_port_guid(n)));
    } else if (auto* s = dynamic_cast<IbSwitch*>(nodes[n].get())) {
      s->set_lid(lid(n));
    } else {
      throw std::logic_error("subnet manager: " + nodes[n]->name() + " is neither an HCA nor an IB switch");
    }
  }

  std::vector<int> roots;
  for (const std::string& r : cfg_.roots)
    if (auto i = g_.find(r)) roots.push_back(*i);
  table_ = ib_forwarding(g_, cfg_.routing, roots);
  loop_free_ = rdmasim::credit_loop_free(g_, table_);

  for (int n = g_.host_count(); n < g_.size(); ++n) {
    auto& s = static_cast<IbSwitch&>(*nodes[n]);
    s.clear_forwarding();
    for (int h = 0; h < g_.host_count(); ++h)
      if (const int p = table_.port(n, h); p >= 0) s.set_forwarding(lid(h), static_cast<uint16_t>(p));
    for (size_t p = 0; p < s.port_count(); ++p) s.set_sl_to_vl(static_cast<uint16_t>(p), sl2vl_);
  }
}

}  // namespace rdmasim
