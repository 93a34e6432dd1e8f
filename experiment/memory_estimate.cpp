#include "experiment/memory_estimate.hpp"

#include <algorithm>
#include <cstdio>
#include <string_view>
#include <unordered_set>

#include "fabrics/registry.hpp"
#include "workloads/registry.hpp"
#include "workloads/workload_memory.hpp"

namespace rdmasim {

namespace {

// Measured, not derived: peak RSS of runs that vary one thing, divided by
// how many of it there were (bench/memory.py and bench/scale.py print
// them; rounded up). docs/performance.md ("The memory estimate") has the
// runs and how close the estimate comes.
// rdmasim itself, code, libraries, the price catalogue: 12.5 MiB (the
// smallest examples peak at 11.9 to 12.6 MiB with this round's 6 MB binary).
constexpr uint64_t kProgramBytes = 25 << 19;
// A host: its NIC, CPU model, memory map, its node's share of the set-up
// (heaptrack of a k = 64 fat tree: about 2.1 KiB a host).
constexpr uint64_t kHostBytes = 3 * 1024;
// A port (each end of a link): its queues, PFC state, its share of its
// node; heaptrack of fat trees at k = 32 and 64: 1.1 KiB a port (port
// objects, PFC's per-port state; queues that empty give their room back),
// counted as 2 KiB so that light loads, where these fixed costs are most
// of the peak, are not under (k = 16 at load 0.1: 0.94 of its peak).
constexpr uint64_t kPortBytes = 2048;
// One end of a connection: QP, CQs, MRs, the program. A k=8 fat tree's
// all-to-all (16,256 connections) peaks 69 MiB above the same tree without
// one: 2.2 KiB an end (1.7 KiB at k = 32's peak, heaptrack).
constexpr uint64_t kQpBytes = 2304;
// A flow of `kind: flows` beyond its two QPs: its record, its programs'
// coroutines, statistics, congestion control state (2.1 KiB a flow at
// k = 32's peak, heaptrack); and frames a sending host keeps in the
// network (data on the wires and in queues, their ACKs, the events that
// carry them) while it sends: 33 KiB a sender at k = 32, 2 ms, with
// waiting frames parked without their payload's room and cancelled events
// holding no slot. The estimate is 0.94 to 1.39 times the peaks of fat
// trees from k = 8 to 64 at loads 0.1 to 0.7 (docs/performance.md).
constexpr uint64_t kFlowBytes = 3 * 1024;
constexpr uint64_t kInFlightBytes = 32 * 1024;
constexpr uint64_t kCaptureFileBytes = 64 * 1024;  // a capture file's stdio buffer (pcap/)
constexpr uint64_t kPacketBytes = 256 + 64;        // an ACK's packet buffer and header (core/packet.hpp)

// Capture files a run writes (each with its stdio buffer): a host's port
// each (`hosts`), every port (`all`), the listed nodes' ports.
uint64_t capture_files(const ExperimentConfig& x) {
  const CaptureConfig& c = x.capture;
  if (c.mode == CaptureMode::none) return 0;
  const std::unordered_set<std::string_view> named =
      c.mode == CaptureMode::hosts
          ? std::unordered_set<std::string_view>(x.topology.hosts.begin(), x.topology.hosts.end())
          : std::unordered_set<std::string_view>(c.nodes.begin(), c.nodes.end());
  auto captured = [&](const std::string& n) { return c.mode == CaptureMode::all || named.contains(n); };
  uint64_t files = 0;
  for (const LinkSpec& l : x.topology.links) files += (captured(l.a) ? 1 : 0) + (captured(l.b) ? 1 : 0);
  return files;
}

std::string about(uint64_t b) {
  char s[32];
  if (b < 1024) return std::to_string(b) + " bytes";
  if (b >= (uint64_t{1} << 30))
    std::snprintf(s, sizeof s, "%.1f GiB", static_cast<double>(b) / (1 << 30));
  else if (b >= (uint64_t{1} << 20))
    std::snprintf(s, sizeof s, "%.1f MiB", static_cast<double>(b) / (1 << 20));
  else
    std::snprintf(s, sizeof s, "%.0f KiB", static_cast<double>(b) / (1 << 10));
  return s;
}

}  // namespace

namespace {

// The network's own parts: the program, hosts, ports, routing tables, capture buffers.
void network_parts(const ExperimentConfig& x, const Fabric::MemoryCosts& fabric, int line, int column,
                   MemoryEstimate& e) {
  const TopologyConfig& t = x.topology;
  const uint64_t hosts = t.hosts.size();
  const uint64_t forwarding = t.switches.size() + t.routers.size();
  const uint64_t nodes = hosts + forwarding;
  const uint64_t ports = 2 * t.links.size();
  e.parts.push_back({"the program", kProgramBytes, "code, libraries, the price catalogue", "", line, column});
  const uint64_t host = kHostBytes + fabric.host_bytes;
  e.parts.push_back({"hosts", sat_mul(hosts, host), std::to_string(hosts) + " hosts", "", line, column});
  e.parts.push_back(
      {"ports", sat_mul(ports, kPortBytes), std::to_string(ports) + " ports (link ends)", "", line, column});
  // Hops between every two forwarding nodes (topologies/routing.hpp,
  // HostPaths), and IB's forwarding tables: an entry a LID at each switch.
  e.parts.push_back({"routing tables",
                     sat_add(sat_add(sat_mul(sat_mul(forwarding, forwarding), sizeof(uint16_t)),
                                     sat_mul(nodes, sizeof(int32_t))),
                             sat_mul(sat_mul(t.switches.size(), nodes), fabric.forwarding_entry_bytes)),
                     std::to_string(forwarding) + " x " + std::to_string(forwarding) + " switches" +
                         (fabric.forwarding_entry_bytes ? " and " + std::to_string(t.switches.size()) +
                                                              " x " + std::to_string(nodes) + " LIDs"
                                                        : ""),
                     "", line, column});
  if (const uint64_t files = capture_files(x))
    e.parts.push_back({"capture buffers", sat_mul(files, kCaptureFileBytes),
                       std::to_string(files) + " capture files", "", line, column});
}

// What the workloads hold, summed over them; `qps` and `bufs` point at the
// workload with the most connections and the most buffer bytes.
struct WorkloadTotals {
  uint64_t connections = 0, flows = 0;
  double sending = 0;
  double stream_buffers = 0;  // bytes of byte streams' send buffers (MemoryCosts::stream_buffer_limit)
  MemoryPart bufs{"message buffers", 0, "", "", 0, 0};
  MemoryPart qps{"QPs", 0, "", "", 0, 0};
};

WorkloadTotals workload_totals(const ExperimentConfig& x) {
  WorkloadTotals s;
  uint64_t largest = 0, most_pairs = 0;
  for (size_t i = 0; i < x.workloads.size(); ++i) {
    const WorkloadConfig& w = x.workloads[i];
    const WorkloadMemory m = workload_of(w).memory(x, w);
    const uint64_t p = m.connections;
    s.connections = sat_add(s.connections, p);
    s.flows = sat_add(s.flows, m.flows);
    s.sending += m.sending;
    s.stream_buffers += m.posting * static_cast<double>(stream_buffer_bytes(x, m.posted_per_connection));
    if (p >= most_pairs) {  // QPs are pointed at the workload with the most
      most_pairs = p;
      s.qps.key = "workloads[" + std::to_string(i) + "]";
      s.qps.line = w.line;
      s.qps.column = w.column;
    }
    const uint64_t b = m.buffer_bytes;
    s.bufs.bytes = sat_add(s.bufs.bytes, b);
    if (b < largest) continue;
    largest = b;
    s.bufs.key = "workloads[" + std::to_string(i) + "]";
    s.bufs.line = w.line;
    s.bufs.column = w.column;
    s.bufs.detail = "the most: workload " + w.name + ", " + about(b) + " " + m.buffers +
                    (p > 1 ? " over " + std::to_string(p) + " pairs" : "");
  }
  return s;
}

// The parts that grow with the workloads' connections, flows and senders.
void workload_parts(const ExperimentConfig& x, const Fabric::MemoryCosts& fabric, int line, int column,
                    WorkloadTotals& s, MemoryEstimate& e) {
  const uint64_t hosts = x.topology.hosts.size();
  MemoryPart& qps = s.qps;
  qps.bytes = sat_mul(sat_mul(s.connections, 2), kQpBytes);
  qps.detail = std::to_string(s.connections) + " connections, a QP at each end";
  e.parts.push_back(qps);
  if (s.flows) {
    qps.what = "flows";
    qps.bytes = sat_mul(s.flows, kFlowBytes);
    qps.detail = std::to_string(s.flows) + " flows started, their records and programs";
    e.parts.push_back(qps);
  }
  // Until the run stops (a run stopped at once sends nothing).
  if (!x.stop || *x.stop > Time{})
    e.parts.push_back(
        {"frames in flight",
         static_cast<uint64_t>(s.sending * static_cast<double>(fabric.in_flight_bytes ? fabric.in_flight_bytes
                                                                                      : kInFlightBytes)),
         "what senders keep on the wires and in queues", "", line, column});
  if (fabric.connection_bytes) {
    qps.what = std::string(fabric.connection_part);
    qps.bytes = sat_mul(sat_mul(s.connections, 2), fabric.connection_bytes);
    qps.detail = std::to_string(s.connections) + " connections, one at each end";
    e.parts.push_back(qps);
  }
  if (s.stream_buffers >= 1) {
    qps.what = "send buffers";
    qps.bytes = static_cast<uint64_t>(std::min(s.stream_buffers, 0x1p63));
    qps.detail = "what connections' byte streams hold: TCP's send buffers, sockets' queues";
    e.parts.push_back(qps);
  }
  if (fabric.setup_floods) {
    // A packet buffer a host, all queued at once at setup.
    qps.what = "neighbour solicitations";
    qps.bytes = sat_mul(sat_mul(s.connections, hosts > 1 ? hosts - 1 : 1), kPacketBytes);
    qps.detail = std::to_string(s.connections) + " connections, each solicitation flooded to " +
                 std::to_string(hosts > 1 ? hosts - 1 : 1) + " hosts at setup";
    e.parts.push_back(qps);
  }
  e.parts.push_back(std::move(s.bufs));
}

}  // namespace

MemoryEstimate estimate_memory(const ExperimentConfig& x) {
  const TopologyConfig& t = x.topology;
  // Parts of the network are pointed at where the topology begins.
  const int line = t.links.empty() ? 1 : t.links.front().line,
            column = t.links.empty() ? 1 : t.links.front().column;
  MemoryEstimate e;
  const Fabric::MemoryCosts fabric = fabric_of(x).memory_costs();
  network_parts(x, fabric, line, column, e);
  WorkloadTotals s = workload_totals(x);
  workload_parts(x, fabric, line, column, s, e);
  std::stable_sort(e.parts.begin(), e.parts.end(),
                   [](const MemoryPart& a, const MemoryPart& b) { return a.bytes > b.bytes; });
  for (const MemoryPart& p : e.parts) e.total = sat_add(e.total, p.bytes);
  return e;
}

std::optional<LoadError> memory_error(const ExperimentConfig& x, uint64_t limit,
                                      const std::string& limit_from) {
  const MemoryEstimate e = estimate_memory(x);
  if (e.total <= limit) return std::nullopt;
  const MemoryPart& top = e.parts.front();
  std::string parts;
  for (size_t i = 1; i < e.parts.size(); ++i)
    if (e.parts[i].bytes)
      parts += (parts.empty() ? "" : ", ") + e.parts[i].what + " " + about(e.parts[i].bytes);
  LoadError err;
  err.file = x.file.string();
  err.line = std::max(1, top.line);
  err.column = std::max(1, top.column);
  err.message = (top.key.empty() ? std::string("topology") : top.key) + ": this run would need about " +
                about(e.total) + " of memory, more than the limit of " + about(limit) + " (" + limit_from +
                "); the largest part is " + top.what + ", " + about(top.bytes) + " (" + top.detail + ")" +
                (parts.empty() ? "" : "; then " + parts);
  return err;
}

}  // namespace rdmasim
