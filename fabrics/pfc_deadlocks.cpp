#include "fabrics/pfc_deadlocks.hpp"

#include <algorithm>
#include <functional>
#include <tuple>

namespace rdmasim {

namespace {

using PortRef = std::pair<int, uint16_t>;  // node, port
using Edges = std::map<PortRef, std::vector<PortRef>>;

// Extends `path`; a step back to its first port closes a cycle. Ports
// already searched from are left out, so each cycle is found from its
// smallest port only.
void find_cycles(const Edges& edges, std::vector<PortRef>& path, const std::set<PortRef>& done,
                 const std::function<void(const std::vector<PortRef>&)>& found) {
  for (const PortRef& next : edges.at(path.back())) {
    if (next == path.front()) {
      found(path);
      continue;
    }
    if (done.count(next) || std::find(path.begin(), path.end(), next) != path.end()) continue;
    path.push_back(next);
    find_cycles(edges, path, done, found);
    path.pop_back();
  }
}

}  // namespace

PfcDeadlockFinder::PfcDeadlockFinder(const Network& net) : net_(net) {
  for (size_t n = 0; n < net.nodes.size(); ++n) index_[net.nodes[n].get()] = static_cast<int>(n);
}

void PfcDeadlockFinder::add(std::vector<Network::PfcStuck> stuck) {
  std::sort(stuck.begin(), stuck.end(), [](const Network::PfcStuck& a, const Network::PfcStuck& b) {
    return std::tie(a.at, a.node, a.port) < std::tie(b.at, b.node, b.port);
  });
  for (size_t from = 0; from < stuck.size();) {
    // The ports stuck at one grid time, and each one's edges to the
    // stuck ports of its peer node (the peer's own port aside).
    const Time now = stuck[from].at;
    size_t to = from;
    Edges edges;
    for (; to < stuck.size() && stuck[to].at == now; ++to) edges[{stuck[to].node, stuck[to].port}];
    from = to;
    for (auto& [port, next] : edges) {
      const Port* peer = net_.nodes[static_cast<size_t>(port.first)]->port(port.second).peer();
      const int m = index_.at(&peer->owner());
      for (const auto& [cand, unused] : edges)
        if (cand.first == m && cand.second != peer->index()) next.push_back(cand);
    }
    // Every cycle, by depth-first search from each port in order.
    std::set<PortRef> done;
    for (const auto& [start, unused] : edges) {
      std::vector<PortRef> path{start};
      find_cycles(edges, path, done, [&](const std::vector<PortRef>& cycle) {
        if (!reported_.insert(std::set<PortRef>(cycle.begin(), cycle.end())).second) return;
        Network::PfcDeadlock d{now, {}};
        for (const PortRef& p : cycle)
          d.ports.emplace_back(net_.nodes[static_cast<size_t>(p.first)]->name(), p.second);
        found_.push_back(std::move(d));
      });
      done.insert(start);
    }
  }
}

}  // namespace rdmasim
