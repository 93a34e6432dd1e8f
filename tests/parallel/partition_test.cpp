#include "parallel/partition.hpp"

#include <doctest/doctest.h>

#include "core/errors.hpp"
#include "topologies/generate.hpp"

using namespace rdmasim;

namespace {

WorkloadConfig pair(const std::string& from, const std::string& to) {
  WorkloadConfig w;
  w.from = {from};
  w.to = {to};
  return w;
}

}  // namespace

TEST_CASE("partition: pods keeps a workload's hosts together and leaves with their hosts") {
  ExperimentConfig cfg;
  cfg.topology = generate_leaf_spine(2, 2, 2, {}, {});  // h0 h1 on leaf0, h2 h3 on leaf1
  cfg.workloads = {pair("h0", "h1"), pair("h2", "h3")};
  const Graph g(cfg.topology);
  const Partition p = partition_network(g, cfg, 2, PartitionMode::pods);
  const auto rank = [&](const char* n) { return p.rank[static_cast<size_t>(*g.find(n))]; };
  CHECK(rank("h0") == rank("h1"));
  CHECK(rank("h2") == rank("h3"));
  CHECK(rank("h0") != rank("h2"));  // two groups of two: one a rank
  CHECK(rank("leaf0") == rank("h0"));
  CHECK(rank("leaf1") == rank("h2"));
  // Only links to spines are cut (each spine goes with one leaf).
  for (int l : p.cut_links) {
    const Graph::Link& link = g.link(l);
    CHECK((g.name(link.a).starts_with("spine") || g.name(link.b).starts_with("spine")));
  }
  CHECK(p.cut_links.size() == 2);
}

TEST_CASE("partition: a workload across leaves; spread puts spines on other ranks; ranks may own nothing") {
  ExperimentConfig cfg;
  cfg.topology = generate_leaf_spine(2, 2, 2, {}, {});
  cfg.workloads = {pair("h0", "h2")};
  const Graph g(cfg.topology);
  const Partition pods = partition_network(g, cfg, 4, PartitionMode::pods);
  const auto rank = [&](const Partition& p, const char* n) {
    return p.rank[static_cast<size_t>(*g.find(n))];
  };
  CHECK(rank(pods, "h0") == rank(pods, "h2"));
  const Partition spread = partition_network(g, cfg, 4, PartitionMode::spread);
  CHECK(rank(spread, "spine0") != rank(spread, "spine1"));
  CHECK(!spread.cut_links.empty());
  int owned[4] = {};
  for (int r : spread.rank) ++owned[r];
  CHECK(owned[0] + owned[1] + owned[2] + owned[3] == g.size());
  // One rank: nothing is cut.
  CHECK(partition_network(g, cfg, 1, PartitionMode::spread).cut_links.empty());
  CHECK_THROWS_AS(partition_mode("metis"), InputError);
}
