// `kind: flows` workloads whose flows have their two ends on different
// ranks (workload_spans_ranks, docs/parallel.md): each rank runs the ends
// its hosts hold. The sender's rank ends a flow and records it; a note
// tells the receiver's rank, which checks what landed in its host's memory
// and gives the buffers back; at the end rank 0 puts the ranks' parts
// together into what one process reports.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "parallel/parallel_run.hpp"
#include "workloads/flows_run.hpp"

namespace rdmasim {

class SpanningFlows {
 public:
  explicit SpanningFlows(ParallelRun& par);

  // Workload `index` (its place in the experiment) runs over the ranks.
  void add(size_t index, FlowsRun& run);
  bool has(size_t index) const { return runs_.contains(index); }

  // Collective, for every added workload in the same order on every rank.
  // On rank 0, workload `index`'s statistics and flow records as one
  // process has them; elsewhere this rank's own. A rank that fails makes
  // every rank throw (ParallelRun::agree).
  FlowStats result(size_t index, std::vector<FlowRecord>& records);

 private:
  FlowStats part(size_t index, std::vector<FlowRecord>& records, std::string& out) const;
  static FlowStats merge(const FlowStats& s, const std::vector<std::string>& parts,
                         std::vector<FlowRecord>& records);

  ParallelRun& par_;
  std::map<size_t, FlowsRun*> runs_;
};

}  // namespace rdmasim
