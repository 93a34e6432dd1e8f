#include "topologies/reachability.hpp"

#include <algorithm>
#include <iterator>

namespace rdmasim {

namespace {

// Links joined at every node that forwards (switches, and routers when
// through_routers): two hosts reach each other when one of their links
// shares a group. Per host, its groups, ascending.
std::vector<std::vector<int>> link_groups(const Graph& g, bool through_routers) {
  std::vector<int> parent(static_cast<size_t>(g.link_count()));
  for (size_t i = 0; i < parent.size(); ++i) parent[i] = static_cast<int>(i);
  auto find = [&](int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (int n = g.host_count(); n < g.size(); ++n) {
    if (g.kind(n) == NodeKind::router && !through_routers) continue;
    const auto ports = g.ports(n);
    for (size_t p = 1; p < ports.size(); ++p) parent[find(ports[p].link)] = find(ports[0].link);
  }
  std::vector<std::vector<int>> groups(static_cast<size_t>(g.host_count()));
  for (int h = 0; h < g.host_count(); ++h) {
    for (const Graph::Port& p : g.ports(h)) groups[h].push_back(find(p.link));
    std::sort(groups[h].begin(), groups[h].end());
  }
  return groups;
}

}  // namespace

bool common_group(const std::vector<std::vector<int>>& groups, const std::vector<int>& from,
                  const std::vector<int>& to) {
  std::vector<int> common = groups[from.front()];
  for (const auto* list : {&from, &to}) {
    for (int h : *list) {
      std::vector<int> both;
      std::set_intersection(common.begin(), common.end(), groups[h].begin(), groups[h].end(),
                            std::back_inserter(both));
      common = std::move(both);
    }
  }
  return !common.empty();
}

const std::vector<std::vector<int>>& Paths::routed() {
  if (!routed_) routed_ = link_groups(g_, true);
  return *routed_;
}

const std::vector<std::vector<int>>& Paths::bridged() {
  if (!bridged_) bridged_ = link_groups(g_, false);
  return *bridged_;
}

const ForwardingTable& Paths::updown(const std::vector<std::string>& root_names) {
  if (!updown_) {
    std::vector<int> roots;
    for (const std::string& r : root_names) roots.push_back(*g_.find(r));
    updown_ = ib_forwarding(g_, IbRouting::updown, roots);
  }
  return *updown_;
}

}  // namespace rdmasim
