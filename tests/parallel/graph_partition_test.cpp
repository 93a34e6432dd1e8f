#include "parallel/graph_partition.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "parallel/partition.hpp"
#include "topologies/generate.hpp"

using namespace rdmasim;

TEST_CASE("balanced_partition: two rings joined by one edge are cut at that edge") {
  WeightedGraph g;
  g.weight.assign(12, 1);
  for (int v = 0; v < 6; ++v) {
    g.edges.push_back({v, (v + 1) % 6, 1});
    g.edges.push_back({6 + v, 6 + (v + 1) % 6, 1});
  }
  g.edges.push_back({0, 6, 1});
  const std::vector<int> part = balanced_partition(g, 2);
  for (int v = 1; v < 6; ++v) CHECK(part[static_cast<size_t>(v)] == part[0]);
  for (int v = 7; v < 12; ++v) CHECK(part[static_cast<size_t>(v)] == part[6]);
  CHECK(part[0] != part[6]);
  CHECK(balanced_partition(g, 2) == part);  // one seed, one partition
}

TEST_CASE("balanced_partition: weights balance; few vertices; no edges") {
  WeightedGraph heavy;  // a ring of 16, one vertex as heavy as 8 others
  heavy.weight.assign(16, 1);
  heavy.weight[0] = 8;
  for (int v = 0; v < 16; ++v) heavy.edges.push_back({v, (v + 1) % 16, 1});
  const std::vector<int> part = balanced_partition(heavy, 2);
  int64_t with_heavy = 0;
  for (size_t v = 0; v < part.size(); ++v)
    if (part[v] == part[0]) with_heavy += heavy.weight[v];
  CHECK(with_heavy <= 12);  // of 23: balanced by weight, not by count
  CHECK(with_heavy >= 11);

  WeightedGraph two;
  two.weight = {1, 1};
  two.edges = {{0, 1, 1}};
  CHECK(balanced_partition(two, 4) == std::vector<int>{0, 1});
  CHECK(balanced_partition(two, 1) == std::vector<int>{0, 0});

  WeightedGraph apart;
  apart.weight = {2, 1, 1, 2};
  const std::vector<int> p = balanced_partition(apart, 2);
  int load[2] = {};
  for (size_t v = 0; v < p.size(); ++v) load[p[v]] += static_cast<int>(apart.weight[v]);
  CHECK(load[0] == 3);
  CHECK(load[1] == 3);
}

namespace {

// A leaf-spine written link by link, its hosts listed in an order that
// says nothing about their leaves (h0 on leaf0, h1 on leaf1, ...).
ExperimentConfig scrambled_leaf_spine(int leaves, int hosts_per_leaf) {
  ExperimentConfig cfg;
  TopologyConfig& t = cfg.topology;
  for (int s = 0; s < 2; ++s) t.switches.push_back("spine" + std::to_string(s));
  for (int l = 0; l < leaves; ++l) t.switches.push_back("leaf" + std::to_string(l));
  const int hosts = leaves * hosts_per_leaf;
  for (int h = 0; h < hosts; ++h) t.hosts.push_back("h" + std::to_string(h));
  for (int h = 0; h < hosts; ++h)
    t.links.push_back({"h" + std::to_string(h), "leaf" + std::to_string(h % leaves), {}});
  for (int l = 0; l < leaves; ++l)
    for (int s = 0; s < 2; ++s)
      t.links.push_back({"leaf" + std::to_string(l), "spine" + std::to_string(s), {}});
  return cfg;
}

}  // namespace

TEST_CASE("partition graph: a topology written by hand is split by leaf, not by host order") {
  ExperimentConfig cfg = scrambled_leaf_spine(4, 4);
  CHECK(default_partition(cfg) == PartitionMode::graph);
  CHECK(partition_mode("graph") == PartitionMode::graph);
  CHECK(std::string(partition_name(PartitionMode::graph)) == "graph");
  const Graph g(cfg.topology);
  const auto rank = [&](const Partition& p, const std::string& n) {
    return p.rank[static_cast<size_t>(*g.find(n))];
  };
  const Partition p = partition_network(g, cfg, 2, PartitionMode::graph);
  CHECK(p.mode == PartitionMode::graph);
  // Each host with its leaf; only leaf-spine links cut; two leaves a rank.
  for (int h = 0; h < 16; ++h)
    CHECK(rank(p, "h" + std::to_string(h)) == rank(p, "leaf" + std::to_string(h % 4)));
  int leaves_on_0 = 0;
  for (int l = 0; l < 4; ++l) leaves_on_0 += rank(p, "leaf" + std::to_string(l)) == 0;
  CHECK(leaves_on_0 == 2);
  for (int l : p.cut_links) {
    const Graph::Link& link = g.link(l);
    CHECK((g.name(link.a).starts_with("spine") || g.name(link.b).starts_with("spine")));
  }
  CHECK(p.cut_links.size() == 4);
  // pods, by host order, cuts host links: h0..h7 on rank 0 sit under all four leaves.
  const Partition pods = partition_network(g, cfg, 2, PartitionMode::pods);
  CHECK(pods.cut_links.size() > p.cut_links.size());

  // A generated topology keeps pods by default.
  ExperimentConfig gen;
  gen.topology = generate_leaf_spine(2, 2, 2, {}, {});
  CHECK(default_partition(gen) == PartitionMode::pods);
}

TEST_CASE("partition graph: a workload's hosts stay together; a link with no delay is not cut") {
  ExperimentConfig cfg = scrambled_leaf_spine(4, 4);
  WorkloadConfig w;  // a ping-pong kind: its hosts are one group
  w.from = {"h0"};
  w.to = {"h1"};  // h0 on leaf0, h1 on leaf1
  cfg.workloads = {w};
  for (LinkSpec& l : cfg.topology.links)
    if (l.a == "leaf2" || l.a == "leaf3") l.config.delay = Time{};  // leaf2, leaf3 to the spines
  const Graph g(cfg.topology);
  const auto rank = [&](const Partition& p, const std::string& n) {
    return p.rank[static_cast<size_t>(*g.find(n))];
  };
  const Partition p = partition_network(g, cfg, 2, PartitionMode::graph);
  CHECK(rank(p, "h0") == rank(p, "h1"));
  for (int l : p.cut_links) CHECK(cfg.topology.links[static_cast<size_t>(l)].config.delay > Time{});
}
