// Runs a `kind: flows` workload (workloads/flows.hpp): schedules the flows'
// arrivals, and at each one sets up the flow's own QP pair and buffers and
// posts its one message. A flow that ends is checked (the receiver holds the
// sender's pattern, workloads/payload_pattern.hpp), recorded, and gives its
// buffers' pages back, so memory follows the flows in flight, not the run.
// Its transports' retransmissions are counted at the end, over the run.
// A UC WRITE completes once sent, so its receiver is checked when the
// message lands (or, never landing, it was not delivered).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
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
  FlowStats result() const { return result(nullptr); }
  const std::vector<FlowRecord>& records() const { return records_; }
  // The QPs of the flows in flight.
  void each_qp(const std::function<void(const Host&, const verbs::QueuePair*)>& f) const;

  // A run split over ranks (docs/parallel.md) runs each end of a flow on
  // its host's rank. The sender's rank (a's) keeps the flow's record and
  // ends it; where the two hosts are on different ranks, they tell each
  // other what one process would read across (notes, a FlowsRunNote
  // encoded (workloads/flow_messages.hpp), sent with `f` to the rank that
  // runs host `at`, read there with heard()):
  // - a flow of one program (RDMA WRITEs): when it ends, its receiver's
  //   rank checks what landed in its host's memory and gives it back;
  // - a flow of two (SENDs, sockets): b's program, when it ends, sends
  //   what it found (PairFlow::Part) and its end; a's rank ends the flow
  //   once both programs have, at the later of the two ends;
  // - a socket client tells the server's rank when it sent its message.
  // The ranks' result() together are the one-process result (parallel/
  // spanning_flows.cpp merges them).
  void on_note(std::function<void(const Host& at, std::string note)> f) { note_ = std::move(f); }
  void heard(std::string_view note);
  // When a flow ended, in the one order of events: the event's time and
  // key, and the program end's place among this workload's in that event.
  struct EndKey {
    Time at;
    uint64_t event = 0, seq = 0;
    auto operator<=>(const EndKey&) const = default;
  };
  // Statistics of the flows this engine sends and of the receivers it
  // runs. `keys`, if given, gets the end of each latency sample's flow,
  // as result().latency_ps lists them; a flow still running, (never, its
  // id), after all ended ones and in id order, as one process lists them.
  FlowStats result(std::vector<EndKey>* keys) const;
  // Whether this engine runs flow `id`'s sender.
  bool sends_here(size_t id) const;

 private:
  using Key = EndKey;
  void arrive();
  // Flow `id` ended (at the event `at`): record, check, give memory back.
  // `placed`: what the receiver's rank found in its memory, if that is elsewhere.
  void flow_ended(size_t id, Key at, bool placed);
  // A program of flow `id` ended here (a's or b's).
  void program_ended(size_t id, bool on_a);
  void ended_elsewhere(size_t id);
  void landed(size_t id);

  WorkloadEnv& env_;
  const WorkloadConfig& w_;
  uint64_t seed_;
  std::vector<Host*> hosts_;
  std::vector<FlowArrival> arrivals_;
  size_t next_ = 0;                               // the next arrival
  std::vector<std::unique_ptr<PairFlow>> flows_;  // by id
  std::vector<bool> ended_ids_;                   // by id: ended here
  std::vector<FlowRecord> records_;
  FlowStats ended_;     // merged statistics of the flows that ended
  size_t running_ = 0;  // flows whose sender this engine runs
  std::function<void(const Host&, std::string)> note_;
  // Flows of two programs split between ranks, on a's rank: each
  // program's end as it is known here, and what b's rank found.
  struct Split {
    std::optional<Key> a, b;
    bool placed = true;
  };
  std::map<size_t, Split> split_;
  std::vector<Key> sample_keys_;  // of ended_.latency_ps
  Key last_end_;                  // the latest program end
  bool received_ok_ = true;       // what receivers of flows ended elsewhere, or landed late, found
  std::set<size_t> landing_;      // ended UC WRITE flows whose data has not landed
};

}  // namespace rdmasim
