// The traffic of an experiment: each workload of the YAML becomes one or
// more flows (a sender, a receiver, a connected QP pair and buffers), each
// run by verbs programs written as coroutines: post work requests, then
// co_await their completions, as a real verbs program would.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/random.hpp"
#include "core/task.hpp"
#include "core/units.hpp"
#include "nodes/host/host.hpp"
#include "topologies/config.hpp"
#include "workloads/flows.hpp"

namespace rdmasim {

namespace nvme {
class StorageRun;
}  // namespace nvme

// What the network offers the workloads: hosts by name and how to reach one
// host from another (ibv_ah_attr for the fabric), plus connection setup time.
struct WorkloadEnv {
  Simulator& sim;
  const ExperimentConfig& cfg;
  std::function<Host*(const std::string&)> host;
  // Address vector from `from` to `to` (dgid, dlid, sl...); throws
  // InputError when `to` cannot be reached (e.g. RoCE v1 across a router).
  std::function<ibv_ah_attr(Host& from, Host& to)> address;
  // When a connection between the two can be ready (management exchange).
  std::function<Time(Host& from, Host& to)> connect_time;
  uint32_t mtu = 4096;  // path MTU in bytes (IBA MTU; iwarp: MSS-bound payload per frame)
  // kind: flows. An unloaded path's cost (ideal FCT), a host's link rate,
  // and the least bytes a data frame adds to its payload on the wire.
  std::function<PathCost(Host& from, Host& to)> path;
  std::function<DataRate(Host& h)> link_rate;
  uint32_t frame_overhead = 0;
  // kind: nvme: the storage targets and connection managers the run's jobs share (made on first use).
  std::shared_ptr<nvme::StorageRun> storage;
  // kind: flows. The least bytes any frame takes on the wire, overhead
  // included (Ethernet: the 60-byte minimum frame and 24): a short last frame's.
  uint32_t min_wire_frame = 0;
};

// Per-op statistics of a flow or of a whole workload.
struct FlowStats {
  uint64_t ops = 0;                                  // operations completed successfully
  uint64_t bytes = 0;                                // payload bytes of those
  std::map<std::string, uint64_t> completions;       // sender's, by ibv_wc_status name
  std::map<std::string, uint64_t> recv_completions;  // receiver's failed ones (flushes, length errors)
  Time start = Time::max(), end;
  std::vector<int64_t> latency_ps;
  // The perftest kinds: when the measuring program posted each work request,
  // and (work request, time) of each completion it took, as perftest keeps
  // tposted and tcompleted (workloads/verbs/perftest_report.hpp).
  std::vector<int64_t> posted_ps;
  std::vector<std::pair<uint64_t, int64_t>> completed_ps;
  Time work_done;  // compute: CPU time it has had
  // udp: datagrams offered, received by the NIC, dropped (by where), delivered.
  struct Datagrams {
    uint64_t offered = 0, received = 0, ring_drops = 0, backlog_drops = 0, socket_drops = 0, delivered = 0;
    uint64_t delivered_in_time = 0;  // while the load was offered
  };
  std::optional<Datagrams> datagrams;
  // Every message delivered, and the receiver holds exactly what was sent;
  // of a workload the run stopped (not finished): the messages it completed.
  bool data_verified = true;
  bool data_mismatch = false;  // some delivered bytes differ from what was sent (not merely undelivered)
  bool finished = false;
  uint64_t planned_ops = 0;        // operations the workload means to run (flows: flows started)
  uint64_t undelivered_bytes = 0;  // the payload of planned operations that did not complete
  // Adds another flow's statistics (data_verified and finished: all of them).
  void merge(const FlowStats& s);
  uint64_t retransmitted_packets = 0;  // by its QPs' transports, both ends
};

class PairFlow;
class Flow;
class FlowsRun;

// One workload on a built network: what its kind (workloads/workload_kind.hpp)
// attaches. The run loop starts it, asks whether it has finished, and at the
// end asks for its statistics; a split run's glue (parallel/) asks the rest.
class WorkloadRun {
 public:
  explicit WorkloadRun(const WorkloadConfig& w) : w_(w) {}
  virtual ~WorkloadRun() = default;
  WorkloadRun(const WorkloadRun&) = delete;
  WorkloadRun& operator=(const WorkloadRun&) = delete;

  const WorkloadConfig& config() const { return w_; }
  // Builds its QPs, buffers or processes and starts its programs.
  virtual void start() = 0;
  // Done (or failed) with everything it meant to do.
  virtual bool finished() const = 0;
  // Its statistics at the end (checks memory, merges flows' statistics).
  virtual FlowStats result() const = 0;
  // Each of its QPs, requester side first, with the host each is on; null
  // for one another rank runs (a split run makes it there only).
  virtual void each_qp(const std::function<void(const Host&, const verbs::QueuePair*)>&) const {}
  // A pair workload's flows on an RDMA fabric, in order, for a split run's
  // glue (docs/parallel.md); else empty.
  virtual std::vector<Flow*> pair_flows() const { return {}; }
  // The statistics of a pair workload from its flows', in order (a run
  // split over ranks has them from every rank's part).
  FlowStats result_of(const std::vector<FlowStats>& flows) const;
  // kind: flows: its runner (a split run's glue hooks in) and every flow
  // started so far; else null.
  virtual FlowsRun* flows_run() const { return nullptr; }
  virtual const std::vector<FlowRecord>* flow_records() const { return nullptr; }
  // What its results.json entry says beyond its kind's results() of the
  // statistics (kind: nvme: fio's numbers of its job), when it ran here.
  virtual void add_results(nlohmann::json& /*entry*/) const {}

 protected:
  WorkloadConfig w_;
};

}  // namespace rdmasim
