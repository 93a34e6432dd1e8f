// capture.timeseries: what congestion-control studies plot, sampled every
// `interval` of simulated time while the run has other work: every port's
// egress queue (timeseries/queues.csv: time_ps,node,port,queue_bytes) and
// every QP's rate and window (timeseries/qps.csv:
// time_ps,workload,qp,rate_bps,window_bytes; qp is host:QPN, rate_bps the
// rate its congestion control paces at or the line rate, window_bytes 0
// without a window). `ports` and `qps` narrow both to the chosen ports and
// workloads; `none` leaves a file out. The rows stay in memory and are
// written at the end.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/engine.hpp"
#include "fabrics/network.hpp"
#include "workloads/workload.hpp"

namespace rdmasim {

class TimeSeries {
 public:
  TimeSeries(Network& net, const std::vector<std::unique_ptr<WorkloadRun>>& runs,
             const TimeSeriesConfig& config);
  // Schedules the first sample (at time 0).
  void start();
  // Writes DIR/timeseries/queues.csv and qps.csv.
  void write(const std::filesystem::path& dir) const;

 private:
  void sample();

  Network& net_;
  std::vector<const WorkloadRun*> runs_;               // the sampled workloads
  std::vector<std::pair<const Node*, size_t>> ports_;  // the sampled ports, in the network's order
  Time interval_;
  bool write_queues_, write_qps_;
  std::string queues_ = "time_ps,node,port,queue_bytes\n";
  std::string qps_ = "time_ps,workload,qp,rate_bps,window_bytes\n";
};

}  // namespace rdmasim
