// A balanced graph partition for topologies written by hand, where the
// numbering of hosts says nothing about where they sit: METIS's k-way
// partitioning (Karypis and Kumar, "A fast and high quality multilevel
// scheme for partitioning irregular graphs", SIAM J. Sci. Comput. 1998),
// which balances the vertices' weights over the parts and keeps the
// weight of the edges it cuts small.
#pragma once

#include <cstdint>
#include <vector>

namespace rdmasim {

struct WeightedGraph {
  std::vector<int64_t> weight;  // by vertex: the work it stands for
  struct Edge {
    int a, b;
    int64_t weight;  // what cutting it costs; edges between the same two vertices add up
  };
  std::vector<Edge> edges;
};

// Each vertex's part in [0, parts). Deterministic: the same graph gives
// the same parts. With no more vertices than parts, vertex v is part v.
std::vector<int> balanced_partition(const WeightedGraph& g, int parts);

}  // namespace rdmasim
