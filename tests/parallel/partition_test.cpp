#include "parallel/partition.hpp"

#include <doctest/doctest.h>

#include "core/errors.hpp"
#include "tests/fixtures/network.hpp"
#include "topologies/generate.hpp"

using namespace rdmasim;

namespace {

// A `kind` workload of `op` from every host of `g` from host `first` on.
WorkloadConfig from_hosts(const Graph& g, WorkloadKind kind, std::string op, int first = 0) {
  WorkloadConfig w;
  w.kind = kind;
  w.op = std::move(op);
  for (int h = first; h < g.host_count(); ++h) w.from.push_back(g.name(h));
  return w;
}

// A 4-ary fat tree's 16 hosts over two ranks by pods: two pods a rank.
void check_two_pods_a_rank(const Graph& g, const Partition& p) {
  for (int h = 0; h < g.host_count(); ++h) CHECK(p.rank[static_cast<size_t>(h)] == (h < 8 ? 0 : 1));
}

}  // namespace

TEST_CASE("partition: pods keeps a workload's hosts together and leaves with their hosts") {
  ExperimentConfig cfg;
  cfg.topology = generate_leaf_spine(2, 2, 2, {}, {});  // h0 h1 on leaf0, h2 h3 on leaf1
  cfg.workloads = {test::tied_pair("h0", "h1"), test::tied_pair("h2", "h3")};
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
  cfg.workloads = {test::tied_pair("h0", "h2")};
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

TEST_CASE("partition: a flows workload of RDMA WRITEs spans ranks; pods fill the ranks in graph order") {
  ExperimentConfig cfg;
  cfg.topology = generate_fat_tree(4, {}, {});  // 16 hosts, 4 pods of 4
  const Graph g(cfg.topology);
  const WorkloadConfig flows = from_hosts(g, WorkloadKind::flows, "rdma_write");
  cfg.workloads = {flows};
  CHECK(workload_spans_ranks(flows, cfg));
  const Partition p = partition_network(g, cfg, 2, PartitionMode::pods);
  // Two pods a rank: hosts 0-7 on rank 0, 8-15 on rank 1; each edge and
  // aggregation switch with its pod, so only links to core switches are cut.
  check_two_pods_a_rank(g, p);
  for (int l : p.cut_links) {
    const Graph::Link& link = g.link(l);
    CHECK((g.name(link.a).starts_with("core") || g.name(link.b).starts_with("core")));
  }
  CHECK(!p.cut_links.empty());
}

TEST_CASE(
    "partition: flows of SENDs (every QP type) and of sockets span ranks; UC WRITEs and other kinds do not") {
  ExperimentConfig cfg;
  cfg.topology = generate_fat_tree(4, {}, {});
  const Graph g(cfg.topology);
  WorkloadConfig flows = from_hosts(g, WorkloadKind::flows, "send");
  for (QpType qp : {QpType::rc, QpType::uc, QpType::ud}) {
    flows.qp = qp;
    CHECK(workload_spans_ranks(flows, cfg));
    CHECK(workload_spans_ranks(flows, cfg));
  }
  // The pods fill the ranks as for WRITEs: two pods a rank.
  flows.qp = QpType::ud;
  cfg.workloads = {flows};
  check_two_pods_a_rank(g, partition_network(g, cfg, 2, PartitionMode::pods));
  // Kernel sockets (fabric: tcp) run flows of op send.
  flows.qp = QpType::rc;
  cfg.fabric = "tcp";
  CHECK(workload_spans_ranks(flows, cfg));
  cfg.fabric = "roce_v2";
  // A UC WRITE completes as it is sent, before its receiver can be checked: one rank.
  WorkloadConfig uc = flows;
  uc.op = "rdma_write";
  uc.qp = QpType::uc;
  CHECK(!workload_spans_ranks(uc, cfg));
  cfg.workloads = {uc};
  const Partition together = partition_network(g, cfg, 2, PartitionMode::pods);
  for (int h = 0; h < g.host_count(); ++h) CHECK(together.rank[static_cast<size_t>(h)] == 0);
  // A send workload is a pair workload: it spans as pairs do (below), not as flows.
  WorkloadConfig sends = test::tied_pair(g.name(0), g.name(9));
  sends.kind = WorkloadKind::send;
  sends.op = "send";
  CHECK(workload_spans_ranks(sends, cfg));
}

TEST_CASE("partition: pair workloads span ranks, each end on its host's rank; write_lat stays together") {
  ExperimentConfig cfg;
  cfg.topology = generate_fat_tree(4, {}, {});  // 16 hosts, 4 pods of 4
  const Graph g(cfg.topology);
  WorkloadConfig incast = from_hosts(g, WorkloadKind::incast, "rdma_write", 1);
  incast.to = {g.name(0)};
  WorkloadConfig a2a = incast;
  a2a.kind = WorkloadKind::all_to_all;
  a2a.to = a2a.from;
  for (WorkloadKind k : {WorkloadKind::rdma_read, WorkloadKind::send, WorkloadKind::pingpong,
                         WorkloadKind::write_bw, WorkloadKind::read_lat, WorkloadKind::atomic_bw}) {
    WorkloadConfig w = test::tied_pair(g.name(0), g.name(15));
    w.kind = k;
    CHECK(workload_spans_ranks(w, cfg));
  }
  CHECK(!workload_spans_ranks(test::tied_pair(g.name(0), g.name(15)), cfg));  // write_lat
  for (const WorkloadConfig& w : {incast, a2a}) {
    CHECK(workload_spans_ranks(w, cfg));
    CHECK(workload_spans_ranks(w, cfg));
    cfg.workloads = {w, test::tied_pair(g.name(4), g.name(12))};
    // The incast's (all_to_all's) hosts are not tied, write_lat's h4 and
    // h12 are: eight hosts a rank in graph order, h12 with h4.
    const Partition p = partition_network(g, cfg, 2, PartitionMode::pods);
    for (int h = 0; h < g.host_count(); ++h)
      CHECK(p.rank[static_cast<size_t>(h)] == (h < 7 || h == 12 ? 0 : 1));
  }
  // Compute and udp are one host's (udp: kernel sockets); on kernel sockets nothing spans.
  WorkloadConfig compute = incast;
  compute.kind = WorkloadKind::compute;
  CHECK(!workload_spans_ranks(compute, cfg));
  cfg.fabric = "tcp";
  CHECK(!workload_spans_ranks(incast, cfg));
}

TEST_CASE("partition: pods shares a fat tree's core switches between the ranks") {
  ExperimentConfig cfg;
  cfg.topology = generate_fat_tree(4, {}, {});  // 16 hosts, 8 edge, 8 aggregation, 4 core
  const Graph g(cfg.topology);
  const WorkloadConfig flows = from_hosts(g, WorkloadKind::flows, "rdma_write");
  cfg.workloads = {flows};
  for (int ranks : {2, 4}) {
    const Partition p = partition_network(g, cfg, ranks, PartitionMode::pods);
    // Every core has one link to each pod: a tie, which the ranks share
    // rather than the first of them taking every core.
    std::vector<int> cores(static_cast<size_t>(ranks), 0), nodes(static_cast<size_t>(ranks), 0);
    for (int n = 0; n < g.size(); ++n) {
      ++nodes[static_cast<size_t>(p.rank[static_cast<size_t>(n)])];
      if (g.name(n).starts_with("core")) ++cores[static_cast<size_t>(p.rank[static_cast<size_t>(n)])];
    }
    for (int r = 0; r < ranks; ++r) {
      CHECK(cores[static_cast<size_t>(r)] == 4 / ranks);
      CHECK(nodes[static_cast<size_t>(r)] == g.size() / ranks);
    }
  }
}
