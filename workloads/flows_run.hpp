// Runs a `kind: flows` workload (workloads/flows.hpp): schedules the flows'
// arrivals, and at each one sets up the flow's own QP pair and buffers and
// posts its one message. A flow that ends is checked (the receiver holds the
// sender's pattern, workloads/payload_pattern.hpp), recorded, and gives its
// buffers' pages back, so memory follows the flows in flight, not the run.
#pragma once

#include <memory>
#include <vector>

#include "workloads/flows.hpp"
#include "workloads/workload.hpp"

namespace rdmasim {

class FlowsRun {
 public:
  FlowsRun(WorkloadEnv& env, const WorkloadConfig& w, uint64_t seed);
  ~FlowsRun();

  void start();
  // Every arrival has come and every flow has ended.
  bool finished() const;
  FlowStats result() const;
  const std::vector<FlowRecord>& records() const { return records_; }
  // The QPs of the flows in flight.
  void each_qp(const std::function<void(const Host&, const verbs::QueuePair&)>& f) const;

  // A run split over ranks (docs/parallel.md) runs a flow's ends on their
  // hosts' ranks: the sender's rank ends the flow and records it, and
  // calls `f` when a completed flow's receiver is another rank's, which
  // then calls ended_elsewhere(id): the receiver's memory is checked and
  // given back there. Both ranks' result() together are the one-process
  // result (parallel/, which merges them).
  void on_remote_end(std::function<void(size_t id, const Host& receiver)> f) { remote_end_ = std::move(f); }
  void ended_elsewhere(size_t id);
  // When each latency sample was taken, in the one order of events: (time,
  // event key), as result().latency_ps lists them.
  const std::vector<std::pair<Time, uint64_t>>& sample_keys() const { return sample_keys_; }
  // Whether this engine runs flow `id`'s sender.
  bool sends_here(size_t id) const;

 private:
  void arrive();
  void flow_ended(size_t id);

  WorkloadEnv& env_;
  const WorkloadConfig& w_;
  uint64_t seed_;
  std::vector<Host*> hosts_;
  std::vector<FlowArrival> arrivals_;
  size_t next_ = 0;                               // the next arrival
  std::vector<std::unique_ptr<PairFlow>> flows_;  // by id; null once ended
  std::vector<FlowRecord> records_;
  FlowStats ended_;     // merged statistics of the flows that ended
  size_t running_ = 0;  // flows whose sender this engine runs
  std::function<void(size_t, const Host&)> remote_end_;
  std::vector<std::pair<Time, uint64_t>> sample_keys_;
  bool received_ok_ = true;            // what ended_elsewhere found
  uint64_t received_retransmits_ = 0;  // ... and its receivers' QPs retransmitted
};

}  // namespace rdmasim
