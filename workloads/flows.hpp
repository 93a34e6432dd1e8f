// `kind: flows`: flow-size traffic as congestion-control studies use it
// (HPCC's traffic generator and per-flow FCT files). Flows go between random
// pairs of the workload's hosts, with sizes drawn from a CDF, and arrive at
// each sender as a Poisson process whose rate makes the sender offer `load`
// of its host link on average. Each flow is one message on its own QP pair.
// Per flow: start, end, flow completion time (FCT) and the ideal FCT of an
// unloaded network, whose ratio is the slowdown.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/random.hpp"
#include "core/units.hpp"
#include "topologies/config.hpp"
#include "workloads/flow_cdf.hpp"

namespace rdmasim {

// ---- flow sizes

class FlowSizes {
 public:
  explicit FlowSizes(std::vector<CdfPoint> points) : p_(std::move(points)) {}
  // Mean size in bytes of the piecewise-linear distribution.
  double mean() const;
  // A size by inverse transform: uniform percent, interpolated linearly
  // between the points around it; at least 1 byte.
  uint64_t sample(Rng& rng) const;

 private:
  std::vector<CdfPoint> p_;
};

// ---- arrivals

struct FlowArrival {
  Time at;
  uint32_t from = 0, to = 0;  // indices into the workload's host list
  uint64_t size = 0;
};
// Every flow of [start, start + duration), ordered by time, then sender.
// Each sender's arrivals are a Poisson process of rate
// load * rate[i] / (8 * mean size); destinations are uniform over the
// other hosts. `rate[i]`: host i's link rate. Sender i draws from its own
// stream of `seed`, so adding hosts does not change another's flows.
std::vector<FlowArrival> flow_arrivals(const FlowsConfig& f, Time start, const std::vector<DataRate>& rate,
                                       uint64_t seed);

// ---- ideal FCT

// What an unloaded path costs one way: the links' propagation delays and
// the switches' forwarding latency; and its slowest link.
struct PathCost {
  Time one_way;
  DataRate bottleneck;
};
// The FCT of a flow alone on its path: the data's way there and the last
// ACK's way back (2 * one_way), plus the serialisation of the whole flow,
// every frame's headers included, at the bottleneck rate. `payload_per_frame`
// is the path MTU's payload, `frame_overhead` the least bytes a data frame
// adds on the wire (headers, CRCs, preamble and gap), `min_wire_frame` the
// least bytes a frame takes there (Ethernet pads a short last frame to it).
Time ideal_fct(uint64_t size, const PathCost& path, uint32_t payload_per_frame, uint32_t frame_overhead,
               uint32_t min_wire_frame);

// ---- results

struct FlowRecord {
  uint64_t id = 0;
  uint32_t from = 0, to = 0;  // host indices into the workload's list
  uint64_t size = 0;
  Time start, end;  // end: zero while not completed
  Time ideal;
  bool completed = false;
};

// results.json's `fct` object of one workload: started, completed,
// slowdown {p50, p95, p99} over completed flows and per size bucket.
nlohmann::json fct_json(const std::vector<FlowRecord>& flows);
// flows.csv rows (no header) of one workload.
std::string flows_csv_rows(const std::string& workload, const std::vector<std::string>& hosts,
                           const std::vector<FlowRecord>& flows);
constexpr std::string_view kFlowsCsvHeader =
    "id,workload,from,to,size_bytes,start_ps,end_ps,fct_ps,ideal_fct_ps,slowdown\n";
// Upper bounds of the size buckets (bytes), those of HPCC's FCT analysis.
std::vector<uint64_t> fct_buckets();

}  // namespace rdmasim
