// capture.timeseries: what congestion-control studies plot, sampled every
// `interval` of simulated time while the run has other work: every port's
// egress queue (timeseries/queues.csv: time_ps,node,port,queue_bytes) and
// every QP's rate and window (timeseries/qps.csv:
// time_ps,workload,qp,rate_bps,window_bytes; qp is host:QPN, rate_bps the
// rate its congestion control paces at or the line rate, window_bytes 0
// without a window). `ports` and `qps` narrow both to the chosen ports and
// workloads; `none` leaves a file out. The rows stay in memory and are
// written at the end; like the pcaps, they stop at capture.max_bytes (the
// sample that would pass it is the last not taken), so a fine interval on a
// long run costs a bounded amount, and results.json says when they ended.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/engine.hpp"
#include "fabrics/network.hpp"
#include "workloads/workload.hpp"

namespace rdmasim {

class TimeSeries {
 public:
  TimeSeries(Network& net, const std::vector<std::unique_ptr<WorkloadRun>>& runs,
             const TimeSeriesConfig& config, uint64_t max_bytes);
  // Schedules the first sample (at time 0).
  void start();
  // Writes DIR/timeseries/queues.csv and qps.csv.
  void write(const std::filesystem::path& dir) const;
  // The rows' bytes, both files together.
  uint64_t bytes() const { return queues_.size() + qps_.size(); }
  // When sampling stopped at max_bytes; empty when it never did.
  std::optional<Time> full_at() const { return full_at_; }

 private:
  void sample();

  Network& net_;
  std::vector<const WorkloadRun*> runs_;               // the sampled workloads
  std::vector<std::pair<const Node*, size_t>> ports_;  // the sampled ports, in the network's order
  Time interval_;
  uint64_t max_bytes_;
  std::optional<Time> full_at_;
  bool write_queues_, write_qps_;
  std::string queues_ = "time_ps,node,port,queue_bytes\n";
  std::string qps_ = "time_ps,workload,qp,rate_bps,window_bytes\n";
};

}  // namespace rdmasim
