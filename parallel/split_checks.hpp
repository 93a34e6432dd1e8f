// What the ranks of a split run agree on at each of the runner's checks
// (every 100 us of simulated time, apps/runner.cpp), beyond the windows'
// own agreement (parallel_run.hpp), so that a bound one process keeps over
// the whole run holds over all ranks, and what a rank keeps does not grow
// with the run:
// - capture.max_bytes: one budget for every rank's captures together. Each
//   rank keeps to it alone and logs the records it tried since the last
//   check (CaptureSet::Record); the ranks total them, and when the total
//   passes the budget rank 0 finds the record one process stopped at (the
//   logs merged in the one order of events) and every rank cuts its files
//   back to before it.
// - PFC deadlocks: the ports each rank found stuck since the last check go
//   to rank 0, which finds the cycles among them (PfcDeadlockFinder).
#pragma once

#include "fabrics/pfc_deadlocks.hpp"
#include "parallel/parallel_run.hpp"
#include "pcap/capture_set.hpp"

namespace rdmasim {

class SplitChecks {
 public:
  // captures: this rank's (null: none); finder: rank 0's is the one that counts.
  SplitChecks(ParallelRun& par, Network& net, CaptureSet* captures, uint64_t max_bytes,
              PfcDeadlockFinder& finder)
      : par_(par), net_(net), captures_(captures), max_bytes_(max_bytes), finder_(finder) {
    if (captures_) captures_->log_records(net.sim);
  }
  // Every rank, at the same point of the run.
  void operator()();

 private:
  void captures();
  void stuck_ports();

  ParallelRun& par_;
  Network& net_;
  CaptureSet* captures_;
  uint64_t max_bytes_;
  PfcDeadlockFinder& finder_;
  uint64_t agreed_ = 0;  // the bytes every rank's captures hold together, as of the last check
  bool ended_ = false;   // the budget ran out: nothing more to agree on
};

}  // namespace rdmasim
