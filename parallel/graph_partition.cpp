#include "parallel/graph_partition.hpp"

#include <metis.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

namespace rdmasim {

std::vector<int> balanced_partition(const WeightedGraph& g, int parts) {
  auto n = static_cast<idx_t>(g.weight.size());  // METIS takes every argument by pointer
  std::vector<int> part(static_cast<size_t>(n), 0);
  if (parts <= 1 || n == 0) return part;
  if (n <= parts) {
    std::iota(part.begin(), part.end(), 0);
    return part;
  }
  // METIS wants each undirected edge once in each endpoint's list, with no
  // self loops and no repeats: parallel links add their weights.
  std::vector<std::map<idx_t, int64_t>> adjacent(static_cast<size_t>(n));
  for (const WeightedGraph::Edge& e : g.edges) {
    if (e.a == e.b) continue;
    adjacent[static_cast<size_t>(e.a)][e.b] += e.weight;
    adjacent[static_cast<size_t>(e.b)][e.a] += e.weight;
  }
  std::vector<idx_t> xadj{0}, adjncy, adjwgt, vwgt;
  for (idx_t v = 0; v < n; ++v) {
    for (auto [to, w] : adjacent[static_cast<size_t>(v)]) {
      adjncy.push_back(to);
      adjwgt.push_back(static_cast<idx_t>(std::min<int64_t>(w, 1 << 20)));
    }
    xadj.push_back(static_cast<idx_t>(adjncy.size()));
    vwgt.push_back(static_cast<idx_t>(
        std::max<int64_t>(1, std::min<int64_t>(g.weight[static_cast<size_t>(v)], 1 << 20))));
  }
  if (adjncy.empty()) {
    // Nothing connects the vertices, only balance counts (and METIS wants
    // edges): the heaviest first, each to the lightest part.
    std::vector<size_t> order(part.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return g.weight[a] > g.weight[b]; });
    std::vector<int64_t> load(static_cast<size_t>(parts), 0);
    for (size_t v : order) {
      part[v] = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
      load[static_cast<size_t>(part[v])] += g.weight[v];
    }
    return part;
  }
  idx_t constraints = 1, nparts = parts, cut = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 1;  // METIS breaks ties at random: one seed, one partition
  std::vector<idx_t> out(static_cast<size_t>(n));
  const int rc = METIS_PartGraphKway(&n, &constraints, xadj.data(), adjncy.data(), vwgt.data(), nullptr,
                                     adjwgt.data(), &nparts, nullptr, nullptr, options, &cut, out.data());
  if (rc != METIS_OK)
    throw std::runtime_error("partition: METIS could not partition the topology (" + std::to_string(rc) +
                             ")");
  for (size_t v = 0; v < out.size(); ++v) part[v] = static_cast<int>(out[v]);
  return part;
}

}  // namespace rdmasim
