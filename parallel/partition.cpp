#include "parallel/partition.hpp"

#include <algorithm>
#include <numeric>

#include "core/errors.hpp"
#include "fabrics/registry.hpp"
#include "parallel/graph_partition.hpp"
#include "workloads/registry.hpp"

namespace rdmasim {

PartitionMode partition_mode(const std::string& name) {
  if (name == "pods") return PartitionMode::pods;
  if (name == "spread") return PartitionMode::spread;
  if (name == "graph") return PartitionMode::graph;
  throw InputError("--partition: unknown partition '" + name + "' (expected pods, spread or graph)");
}

const char* partition_name(PartitionMode mode) {
  switch (mode) {
    case PartitionMode::pods:
      return "pods";
    case PartitionMode::spread:
      return "spread";
    case PartitionMode::graph:
      return "graph";
  }
  return "?";
}

PartitionMode default_partition(const ExperimentConfig& cfg) {
  return cfg.topology.generated == GeneratorKind::none ? PartitionMode::graph : PartitionMode::pods;
}

bool workload_spans_ranks(const WorkloadConfig& w, const ExperimentConfig& cfg) {
  return workload_of(w).spans_ranks(w, cfg);
}

namespace {

int find_root(std::vector<int>& up, int x) {
  while (up[x] != x) x = up[x] = up[up[x]];
  return x;
}

// The least loaded rank, the lowest of equals.
int least_loaded(const std::vector<size_t>& load) {
  return static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
}

void find_cut_links(const Graph& g, Partition& p) {
  for (int l = 0; l < g.link_count(); ++l)
    if (p.rank[static_cast<size_t>(g.link(l).a)] != p.rank[static_cast<size_t>(g.link(l).b)])
      p.cut_links.push_back(l);
}

// One vertex per group of hosts tied by a workload and of nodes tied by
// links with no propagation delay (cut, such a link leaves no lookahead
// and the run is refused), its weight its nodes; one edge per link.
void graph_partition(const Graph& g, const ExperimentConfig& cfg, std::vector<int>& host_up, Partition& p) {
  std::vector<int> up(static_cast<size_t>(g.size()));
  std::iota(up.begin(), up.end(), 0);
  for (int h = 0; h < g.host_count(); ++h) up[static_cast<size_t>(h)] = find_root(host_up, h);
  for (int l = 0; l < g.link_count(); ++l)
    if (cfg.topology.links[static_cast<size_t>(l)].config.delay <= Time{})
      up[static_cast<size_t>(find_root(up, g.link(l).a))] = find_root(up, g.link(l).b);
  std::vector<int> vertex(static_cast<size_t>(g.size()), -1);
  WeightedGraph wg;
  for (int n = 0; n < g.size(); ++n) {
    int& v = vertex[static_cast<size_t>(find_root(up, n))];
    if (v < 0) {
      v = static_cast<int>(wg.weight.size());
      wg.weight.push_back(0);
    }
    vertex[static_cast<size_t>(n)] = v;
    ++wg.weight[static_cast<size_t>(v)];
  }
  for (int l = 0; l < g.link_count(); ++l)
    wg.edges.push_back(
        {vertex[static_cast<size_t>(g.link(l).a)], vertex[static_cast<size_t>(g.link(l).b)], 1});
  const std::vector<int> part = balanced_partition(wg, p.ranks);
  for (int n = 0; n < g.size(); ++n)
    p.rank[static_cast<size_t>(n)] = part[static_cast<size_t>(vertex[static_cast<size_t>(n)])];
  find_cut_links(g, p);
}

// The hosts' groups, in `up` (union-find over hosts): the hosts of a
// workload whose ends must share a rank are one group. The groups' hosts,
// by the group's root.
std::vector<std::vector<int>> host_groups(const Graph& g, const ExperimentConfig& cfg, std::vector<int>& up) {
  const int hosts = g.host_count();
  up.resize(static_cast<size_t>(hosts));
  std::iota(up.begin(), up.end(), 0);
  for (const WorkloadConfig& w : cfg.workloads) {
    if (workload_spans_ranks(w, cfg)) continue;
    int first = -1;
    for (const auto* names : {&w.from, &w.to})
      for (const std::string& name : *names) {
        const auto n = g.find(name);
        if (!n || !g.is_host(*n)) continue;
        if (first < 0)
          first = *n;
        else
          up[find_root(up, *n)] = find_root(up, first);
      }
  }
  std::vector<std::vector<int>> groups(static_cast<size_t>(hosts));
  for (int h = 0; h < hosts; ++h) groups[find_root(up, h)].push_back(h);
  return groups;
}

// Groups in graph order (by their first host), filling the ranks in turn
// with an equal share of the hosts each: generated topologies number a
// leaf's and a pod's hosts together, so a leaf (a pod) stays on one rank
// when its hosts are not tied to others' by a workload and the ranks
// divide the leaves (pods). Each rank's hosts are counted in `load`.
void place_hosts(const std::vector<std::vector<int>>& groups, int hosts, Partition& p,
                 std::vector<size_t>& load) {
  std::vector<size_t> order;
  for (size_t i = 0; i < groups.size(); ++i)
    if (!groups[i].empty()) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return groups[a][0] < groups[b][0]; });
  size_t placed = 0;
  int r = 0;
  for (size_t i : order) {
    for (int h : groups[i]) p.rank[static_cast<size_t>(h)] = r;
    load[static_cast<size_t>(r)] += groups[i].size();
    placed += groups[i].size();
    while (r + 1 < p.ranks &&
           placed * static_cast<size_t>(p.ranks) >= static_cast<size_t>(hosts) * static_cast<size_t>(r + 1))
      ++r;
  }
}

// The rank most of node n's placed neighbours are on (ties: the least
// loaded, then the lowest); -1 when none is placed.
int majority_rank(const Graph& g, const Partition& p, const std::vector<size_t>& load, int n) {
  std::vector<size_t> votes(static_cast<size_t>(p.ranks), 0);
  bool any = false;
  for (const Graph::Port& port : g.ports(n))
    if (p.rank[static_cast<size_t>(port.peer)] >= 0) {
      ++votes[static_cast<size_t>(p.rank[static_cast<size_t>(port.peer)])];
      any = true;
    }
  if (!any) return -1;
  int best = 0;
  for (int r = 1; r < p.ranks; ++r) {
    const auto v = votes[static_cast<size_t>(r)], b = votes[static_cast<size_t>(best)];
    if (v > b || (v == b && load[static_cast<size_t>(r)] < load[static_cast<size_t>(best)])) best = r;
  }
  return best;
}

// Switches, in rounds: each with the rank most of its placed neighbours
// are on (majority_rank). spread: the first round places only the
// switches next to hosts, and the later ones go round robin.
void place_switches(const Graph& g, PartitionMode mode, Partition& p, std::vector<size_t>& load) {
  int next = 0;  // spread: the next rank round robin
  for (bool first_round = true;; first_round = false) {
    std::vector<std::pair<int, int>> placed;
    for (int n = g.host_count(); n < g.size(); ++n) {
      if (p.rank[static_cast<size_t>(n)] >= 0) continue;
      if (mode == PartitionMode::spread && !first_round) {
        placed.emplace_back(n, next);
        ++load[static_cast<size_t>(next)];
        next = (next + 1) % p.ranks;
        continue;
      }
      bool by_host = false;
      for (const Graph::Port& port : g.ports(n)) by_host = by_host || g.is_host(port.peer);
      if (mode == PartitionMode::spread && !by_host) continue;
      const int r = majority_rank(g, p, load, n);
      if (r < 0) continue;
      placed.emplace_back(n, r);
      // Counted at once: a round's ties (a fat tree's cores, each with one
      // link to every pod) then alternate between the ranks instead of all
      // going to the one that was least loaded when the round began.
      ++load[static_cast<size_t>(r)];
    }
    // A round votes by what the previous rounds placed, not by what it placed itself.
    for (auto [n, r] : placed) p.rank[static_cast<size_t>(n)] = r;
    if (placed.empty()) {
      if (mode == PartitionMode::spread && first_round) continue;
      break;
    }
  }
}

}  // namespace

Partition partition_network(const Graph& g, const ExperimentConfig& cfg, int ranks, PartitionMode mode) {
  Partition p;
  p.mode = mode;
  p.ranks = ranks;
  p.rank.assign(static_cast<size_t>(g.size()), -1);
  std::vector<int> up;
  const std::vector<std::vector<int>> groups = host_groups(g, cfg, up);
  if (mode == PartitionMode::graph) {
    graph_partition(g, cfg, up, p);
    return p;
  }
  std::vector<size_t> load(static_cast<size_t>(ranks), 0);
  place_hosts(groups, g.host_count(), p, load);
  place_switches(g, mode, p, load);
  // What no round reached (a switch with no links): the least loaded rank.
  for (int n = 0; n < g.size(); ++n)
    if (p.rank[static_cast<size_t>(n)] < 0) {
      const int r = least_loaded(load);
      p.rank[static_cast<size_t>(n)] = r;
      ++load[static_cast<size_t>(r)];
    }
  find_cut_links(g, p);
  return p;
}

}  // namespace rdmasim
