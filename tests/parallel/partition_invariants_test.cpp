// What every partition must be, whatever its mode, rank count and
// topology (docs/parallel.md): each node on exactly one rank in range, the
// cut links exactly those whose ends are on different ranks (ascending, as
// ParallelRun reads them), every host of a workload that cannot span ranks
// on one rank, and the same partition each time it is made.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "parallel/partition.hpp"
#include "tests/fixtures/network.hpp"
#include "topologies/generate.hpp"

using namespace rdmasim;

namespace {

// Eight hosts on a ring of four switches, written by hand (no pods): the
// graph partition's case.
TopologyConfig ring() {
  TopologyConfig t;
  for (int i = 0; i < 8; ++i) t.hosts.push_back("h" + std::to_string(i));
  for (int s = 0; s < 4; ++s) t.switches.push_back("s" + std::to_string(s));
  for (int i = 0; i < 8; ++i)
    t.links.push_back({"h" + std::to_string(i), "s" + std::to_string(i / 2), {}, 0, 0});
  for (int s = 0; s < 4; ++s)
    t.links.push_back({"s" + std::to_string(s), "s" + std::to_string((s + 1) % 4), {}, 0, 0});
  return t;
}

void check_partition(const Graph& g, const ExperimentConfig& cfg, int ranks, PartitionMode mode) {
  const Partition p = partition_network(g, cfg, ranks, mode);
  CHECK(p.ranks == ranks);
  CHECK(p.mode == mode);
  REQUIRE(p.rank.size() == static_cast<size_t>(g.size()));
  for (int r : p.rank) CHECK((r >= 0 && r < ranks));
  std::vector<int> cut;
  for (int l = 0; l < g.link_count(); ++l)
    if (p.rank[static_cast<size_t>(g.link(l).a)] != p.rank[static_cast<size_t>(g.link(l).b)])
      cut.push_back(l);
  CHECK(p.cut_links == cut);
  for (const WorkloadConfig& w : cfg.workloads)
    CHECK(p.rank[static_cast<size_t>(*g.find(w.from[0]))] == p.rank[static_cast<size_t>(*g.find(w.to[0]))]);
  const Partition again = partition_network(g, cfg, ranks, mode);
  CHECK(again.rank == p.rank);
  CHECK(again.cut_links == p.cut_links);
}

}  // namespace

TEST_CASE("partition: every mode, 1 to 4 ranks, three topologies: a node a rank, the cut links exact") {
  struct Case {
    const char* name;
    TopologyConfig topology;
    std::vector<WorkloadConfig> workloads;
  };
  const Case cases[] = {
      {"leaf_spine",
       generate_leaf_spine(2, 4, 4, {}, {}),
       {test::tied_pair("h0", "h15"), test::tied_pair("h3", "h4")}},
      {"fat_tree", generate_fat_tree(4, {}, {}), {test::tied_pair("h0", "h9"), test::tied_pair("h5", "h14")}},
      {"ring", ring(), {test::tied_pair("h0", "h5"), test::tied_pair("h2", "h7")}},
  };
  for (const Case& c : cases) {
    ExperimentConfig cfg;
    cfg.topology = c.topology;
    cfg.workloads = c.workloads;
    const Graph g(cfg.topology);
    for (PartitionMode mode : {PartitionMode::pods, PartitionMode::spread, PartitionMode::graph})
      for (int ranks = 1; ranks <= 4; ++ranks) {
        INFO(c.name, " ", partition_name(mode), " ", ranks, " ranks");
        check_partition(g, cfg, ranks, mode);
      }
  }
}
