// Pair workloads (rdma_write, rdma_read, send, pingpong, incast,
// all_to_all, the perftest kinds but write_lat: pairs_span_ranks) whose
// flows have their two ends on different ranks (docs/parallel.md): each
// rank runs the programs of its own hosts. Where one process's sender
// program acts on the receiver's memory (Flow::Remote: a READ's source
// slot filled, a completed WRITE's slot checked), a note tells the
// receiver's rank, which acts at the window's end. At the end rank 0
// merges every rank's part of each flow (Flow::Part) into what one
// process reports.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "parallel/parallel_run.hpp"
#include "workloads/flow.hpp"

namespace rdmasim {

class SpanningPairs {
 public:
  // Reads the notes of the workloads added to it and hands every other
  // note to the reader set before (SpanningFlows): make it after that one.
  explicit SpanningPairs(ParallelRun& par);

  // Workload `index` (its place in the experiment), started, runs over the ranks.
  void add(size_t index, WorkloadRun& run);
  bool has(size_t index) const { return runs_.contains(index); }

  // Collective, for every added workload in the same order on every rank.
  // On rank 0, workload `index`'s statistics as one process has them;
  // elsewhere this rank's own. A rank that fails makes every rank throw
  // (ParallelRun::agree).
  FlowStats result(size_t index);

 private:
  struct Run {
    WorkloadRun* run;
    std::vector<Flow*> flows;
  };
  ParallelRun& par_;
  std::map<size_t, Run> runs_;
  std::function<void(const std::string&)> others_;  // the notes of other workloads
};

}  // namespace rdmasim
