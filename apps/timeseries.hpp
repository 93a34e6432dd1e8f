// capture.timeseries: what congestion-control studies plot, sampled at time
// 0 and every `interval` of simulated time after it up to the run's end:
// every port's egress queue (timeseries/queues.csv:
// time_ps,node,port,queue_bytes) and every QP's rate and window
// (timeseries/qps.csv: time_ps,workload,qp,rate_bps,window_bytes; qp is
// host:QPN, rate_bps the rate its congestion control paces at or the line
// rate, window_bytes 0 without a window). `ports` and `qps` narrow both to
// the chosen ports and workloads; `none` leaves a file out.
//
// A sample is the state at its time before that time's events run: the
// run pauses there (run_until_done). The sampler is no event, so a run
// with a time series has the same events, end and results as one without.
// The rows stay in memory and are written at the end; like the pcaps, they
// stop at capture.max_bytes (the first sample due once they hold that much
// is not taken, nor any after it), so a fine interval on a long run costs
// a bounded amount, and results.json says when they ended.
//
// Split over ranks (docs/parallel.md), each rank samples what it owns (its
// nodes' ports, its hosts' QPs) on the same times; the ranks total each
// sample's bytes, so all stop where one process stops, and rank 0 gathers
// the rows and writes them in one process's order.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/engine.hpp"
#include "fabrics/network.hpp"
#include "parallel/parallel_run.hpp"
#include "workloads/workload.hpp"

namespace rdmasim {

class TimeSeries {
 public:
  // `par`: the run is split over ranks (null: one process).
  TimeSeries(Network& net, const std::vector<std::unique_ptr<WorkloadRun>>& runs,
             const TimeSeriesConfig& config, uint64_t max_bytes, ParallelRun* par = nullptr);
  // When the next sample is due; Time::max() once sampling has stopped.
  Time next() const { return next_; }
  // Takes the sample due at next(), every event before it having run and
  // none at it. Split: every rank calls it at the same point.
  void sample();
  // Writes DIR/timeseries/queues.csv and qps.csv. Split: every rank calls
  // it; rank 0 gathers the rows and writes.
  void write(const std::filesystem::path& dir) const;
  // The rows' bytes, both files together (every rank's).
  uint64_t bytes() const { return bytes_; }
  // When sampling stopped at max_bytes; empty when it never did.
  std::optional<Time> full_at() const { return full_at_; }

 private:
  int owner(const Node& node) const;

  Network& net_;
  ParallelRun* par_;
  std::vector<const WorkloadRun*> runs_;               // the sampled workloads
  std::vector<std::pair<const Node*, size_t>> ports_;  // the sampled ports, in the network's order
  Time interval_;
  uint64_t max_bytes_;
  Time next_;
  uint64_t bytes_;
  std::optional<Time> full_at_;
  bool write_queues_, write_qps_;
  // This rank's rows, and each one's length (split: rank 0 interleaves them).
  std::string queues_, qps_;
  std::vector<uint32_t> queue_lens_, qp_lens_;
  // Split, on rank 0: the rank of each QP row of every sample, in one
  // process's order (a port's rank never changes; the QPs come and go).
  std::vector<uint32_t> qp_ranks_;
  uint64_t samples_ = 0;
};

}  // namespace rdmasim
