// How a run is split over ranks: which rank simulates each node, and which
// links the split cuts. Needs no MPI: the single-process build computes and
// tests it too.
#pragma once

#include <string>
#include <vector>

#include "topologies/config.hpp"
#include "topologies/routing.hpp"

namespace rdmasim {

enum class PartitionMode {
  // Hosts that share a workload stay together (a workload's programs read
  // both ends' memory to verify the data), unless it may span ranks
  // (workload_spans_ranks); host groups are spread over the ranks by size, and each switch goes with most of
  // its already placed
  // neighbours, so a leaf stays with its hosts and a pod with its leaves.
  pods,
  // Hosts as `pods`, with the switches they attach to; every other switch
  // round robin over the ranks in graph order (spines and cores apart from
  // the leaves: more cut links, each rank a share of the switching).
  spread,
  // A balanced graph partition (METIS, parallel/graph_partition.hpp) of the
  // topology with each group of hosts tied by a workload as one vertex:
  // for topologies written by hand, whose host order says nothing about
  // where hosts sit. Links with no propagation delay are cut only when
  // nothing else balances (a cut one leaves no lookahead).
  graph,
};

// The partition a run uses when --partition is not given: pods for a
// generated topology (hosts numbered by leaf and pod), graph otherwise.
PartitionMode default_partition(const ExperimentConfig& cfg);

// Whether a workload's flows may have their two ends on different ranks:
// its kind says (Workload::spans_ranks). `kind: flows` of SENDs (any QP
// type, or kernel sockets on a fabric without RDMA) and of RC RDMA WRITEs:
// each end runs on its host's rank, and what one process reads across the
// two ends goes between the ranks as notes (FlowsRun::heard); not UC
// WRITEs (flows_workload.cpp says why). The pair workloads (basic kinds,
// incast, all_to_all, pingpong, perftest kinds) on an RDMA fabric, but
// write_lat: each end's programs check what their own host holds, against
// the pattern, and the sender's acts on the receiver's memory reach its
// rank as notes (parallel/spanning_pairs.hpp). The hosts of any other
// workload stay on one rank: its programs compare both ends' memory as they run.
bool workload_spans_ranks(const WorkloadConfig& w, const ExperimentConfig& cfg);

struct Partition {
  PartitionMode mode = PartitionMode::pods;
  int ranks = 1;
  std::vector<int> rank;       // by graph node
  std::vector<int> cut_links;  // links whose ends are on different ranks, ascending
};

// Throws InputError for a partition name it does not know.
PartitionMode partition_mode(const std::string& name);
const char* partition_name(PartitionMode mode);

Partition partition_network(const Graph& g, const ExperimentConfig& cfg, int ranks, PartitionMode mode);

}  // namespace rdmasim
