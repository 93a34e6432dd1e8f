#include "experiment/memory_estimate.hpp"

#include <algorithm>
#include <cstdio>

#include "fabrics/registry.hpp"

namespace rdmasim {

namespace {

// Measured, not derived: peak RSS of runs that vary one thing, divided by
// how many of it there were (bench/memory.py and bench/scale.py print
// them; rounded up). docs/performance.md ("The memory estimate") has the
// runs and how close the estimate comes.
constexpr uint64_t kProgramBytes = 21
                                   << 19;  // 10.5 MiB: rdmasim itself, code, libraries, the price catalogue
constexpr uint64_t kHostBytes = 8 * 1024;  // a host: its NIC, CPU model, memory map
// A port (each end of a link): its queues, PFC state, its share of its
// node; a fat tree at k = 8 and 16 set up, 2.2 and 2.3 KiB a port.
constexpr uint64_t kPortBytes = 2560;
// One end of a connection: QP, CQs, MRs, the program. A k=8 fat tree's
// all-to-all (16,256 connections) peaks 69 MiB above the same tree without
// one: 2.2 KiB an end.
constexpr uint64_t kQpBytes = 2304;
// A flow of `kind: flows` beyond its two QPs: its record, its programs'
// coroutines, statistics, congestion control state. Fat trees of web-search
// flows at 30 % load peak 16.9 KiB higher a flow started (k = 16, 1 and
// 2 ms: 2,244 flows more, 37 MiB).
constexpr uint64_t kFlowBytes = 17 * 1024 - 2 * kQpBytes;
// Frames a sending host keeps in the network (data on the wires and in
// queues, their ACKs, the events that carry them) while it sends: 128
// hosts writing at 25 Gb/s each peak 7 MiB above the same network idle.
constexpr uint64_t kInFlightBytes = 64 * 1024;
constexpr uint64_t kCaptureFileBytes = 64 * 1024;  // a capture file's stdio buffer (pcap/)
constexpr uint64_t kPacketBytes = 256 + 64;  // a control frame's packet buffer and header (core/packet.hpp)
constexpr uint64_t kMaxRecvDepth = 512;      // receive buffers a QP keeps posted (workloads/)

// The fastest host link: what bounds what a sender can send.
DataRate fastest_host_link(const ExperimentConfig& x) {
  DataRate r;
  const auto& hosts = x.topology.hosts;
  for (const LinkSpec& l : x.topology.links)
    if (std::find(hosts.begin(), hosts.end(), l.a) != hosts.end() ||
        std::find(hosts.begin(), hosts.end(), l.b) != hosts.end())
      r = std::max(r, l.config.bandwidth);
  return r;
}

// Mean flow size of a piecewise-linear CDF (workloads/flows.hpp), and its
// size-biased mean E[S^2] / E[S]: the size of the flow a byte belongs to.
std::pair<double, double> flow_size_means(const FlowsConfig& f) {
  double m = 0, m2 = 0;
  for (size_t i = 1; i < f.points.size(); ++i) {
    const double w = (f.points[i].percent - f.points[i - 1].percent) / 100;
    const double a = f.points[i - 1].size_bytes, b = f.points[i].size_bytes;
    m += w * (a + b) / 2;
    m2 += w * (a * a + a * b + b * b) / 3;  // uniform between the points
  }
  m = std::max(m, 1.0);
  return {m, std::max(m2 / m, 1.0)};
}
double mean_flow_size(const FlowsConfig& f) { return flow_size_means(f).first; }

// Connections of a workload: a QP at each end. `kind: flows` makes one a
// flow and keeps it to the end: senders x load x rate x duration / mean size.
uint64_t pairs(const ExperimentConfig& x, const WorkloadConfig& w) {
  if (w.kind == WorkloadKind::compute) return 0;
  if (w.kind == WorkloadKind::flows) {
    // Flows arrive for `duration`, or until the run stops.
    Time arriving = w.flows.duration;
    if (x.stop) arriving = *x.stop <= w.start ? Time{} : std::min(arriving, *x.stop - w.start);
    return static_cast<uint64_t>(static_cast<double>(w.from.size()) * w.flows.load *
                                 static_cast<double>(fastest_host_link(x).bps()) / 8 * arriving.to_s() /
                                 mean_flow_size(w.flows)) +
           1;
  }
  if (w.kind == WorkloadKind::all_to_all) return w.from.size() * (w.from.size() - 1);
  return w.from.size() * w.to.size();
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

// a * b, saturating: an estimate past 2^64 bytes is refused all the same.
uint64_t mul(uint64_t a, uint64_t b) { return b && a > UINT64_MAX / b ? UINT64_MAX : a * b; }
uint64_t add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

// Buffers a workload's ends commit (host memory is committed when
// touched): per pair, the sender's `min(count, outstanding)` message slots,
// each written just before it first goes out, and where they land: as many
// slots at the target of a WRITE, READ or atomic, the posted receive
// buffers of a SEND (both ends' for a ping-pong, which echoes into them).
// With `stop`, no more than its senders can send by then (and the message
// each has started) at each end. `kind: flows` gives a flow's pages back
// when it ends: a few flows a sender at once.
uint64_t buffers(const ExperimentConfig& x, const WorkloadConfig& w, uint64_t pairs) {
  if (w.kind == WorkloadKind::compute) return 0;
  const uint64_t senders = w.from.size();
  if (w.kind == WorkloadKind::flows) {
    // A sender's link is a queue at utilisation `load`: about load / (1 - load)
    // flows in it at once (M/G/1 with processor sharing), a byte's flow of
    // the size-biased mean; and never more than every flow's bytes.
    const auto [mean, biased] = flow_size_means(w.flows);
    const double all = 2 * static_cast<double>(pairs) * mean;
    const double load = w.flows.load;
    const double at_once = load >= 1 ? all : 2 * static_cast<double>(senders) * load / (1 - load) * biased;
    // Computed payloads (payload: pattern) are stored nowhere, but where a
    // sender copies them into its stream (the sending half) or the fabric
    // has no verbs (sockets: both halves).
    double stored = std::min(all, at_once);
    if (w.computed_payload) {
      const Fabric& f = fabric_of(x);
      stored = !f.rdma() ? stored : f.memory_costs().sender_copies_payload ? stored / 2 : 0;
    }
    return static_cast<uint64_t>(stored);
  }
  const uint64_t size = is_atomic(*from_string<WorkloadKind>(w.op)) ? 8 : w.size.count();
  const uint64_t outstanding = std::max<uint32_t>(w.outstanding, 1);
  uint64_t slots = std::max<uint64_t>(1, std::min(w.count, outstanding));
  const uint64_t recvs = std::clamp<uint64_t>(std::min(w.count, 2 * outstanding + 16), 1, kMaxRecvDepth);
  uint64_t landing = slots;
  if (w.kind == WorkloadKind::pingpong)
    landing = 2 * recvs;
  else if (w.op == "send" || w.op == "send_imm")
    landing = w.post_recvs ? recvs : 0;
  if (w.computed_payload) {  // payload: pattern stores nothing but a sender's copy into its stream
    landing = 0;
    if (!fabric_of(x).memory_costs().sender_copies_payload) slots = 0;
  }
  const uint64_t all = mul(pairs, mul(size, slots + landing));
  if (!x.stop || *x.stop <= w.start) return x.stop ? 0 : all;
  const long double sendable =
      static_cast<long double>(fastest_host_link(x).bps()) / 8 * (*x.stop - w.start).to_s();
  const long double by_stop =
      2 * static_cast<long double>(senders) * (sendable + static_cast<long double>(size));
  return by_stop < static_cast<long double>(all) ? static_cast<uint64_t>(by_stop) : all;
}

// Capture files a run writes (each with its stdio buffer): a host's port
// each (`hosts`), every port (`all`), the listed nodes' ports.
uint64_t capture_files(const ExperimentConfig& x) {
  const CaptureConfig& c = x.capture;
  if (c.mode == CaptureMode::none) return 0;
  const auto& hosts = x.topology.hosts;
  auto captured = [&](const std::string& n) {
    if (c.mode == CaptureMode::all) return true;
    if (c.mode == CaptureMode::hosts) return std::find(hosts.begin(), hosts.end(), n) != hosts.end();
    return std::find(c.nodes.begin(), c.nodes.end(), n) != c.nodes.end();
  };
  uint64_t files = 0;
  for (const LinkSpec& l : x.topology.links) files += (captured(l.a) ? 1 : 0) + (captured(l.b) ? 1 : 0);
  return files;
}

// How many of kInFlightBytes a workload keeps in the network: a sender's
// worth for each of its senders while they send (a flow's sender a share
// of the time that grows with the load: its flows overlap), up to four
// for a sender with as many connections sending at once.
double senders_in_flight(const WorkloadConfig& w, uint64_t pairs) {
  if (w.kind == WorkloadKind::compute || w.from.empty()) return 0;
  const double senders = static_cast<double>(w.from.size());
  if (w.kind == WorkloadKind::flows) return senders * std::min(1.0, 2 * w.flows.load);
  return senders * std::clamp(static_cast<double>(pairs) / senders, 1.0, 4.0);
}

}  // namespace

MemoryEstimate estimate_memory(const ExperimentConfig& x) {
  const TopologyConfig& t = x.topology;
  const uint64_t hosts = t.hosts.size();
  const uint64_t forwarding = t.switches.size() + t.routers.size();
  const uint64_t nodes = hosts + forwarding;
  const uint64_t ports = 2 * t.links.size();
  // Parts of the network are pointed at where the topology begins.
  const int line = t.links.empty() ? 1 : t.links.front().line,
            column = t.links.empty() ? 1 : t.links.front().column;
  MemoryEstimate e;
  e.parts.push_back({"the program", kProgramBytes, "code, libraries, the price catalogue", "", line, column});
  const Fabric::MemoryCosts fabric = fabric_of(x).memory_costs();
  const uint64_t host = kHostBytes + fabric.host_bytes;
  e.parts.push_back({"hosts", mul(hosts, host), std::to_string(hosts) + " hosts", "", line, column});
  e.parts.push_back(
      {"ports", mul(ports, kPortBytes), std::to_string(ports) + " ports (link ends)", "", line, column});
  // Hops between every two forwarding nodes (topologies/routing.hpp,
  // HostPaths), and IB's forwarding tables: an entry a LID at each switch.
  e.parts.push_back({"routing tables",
                     add(add(mul(mul(forwarding, forwarding), sizeof(uint16_t)), mul(nodes, sizeof(int32_t))),
                         mul(mul(t.switches.size(), nodes), fabric.forwarding_entry_bytes)),
                     std::to_string(forwarding) + " x " + std::to_string(forwarding) + " switches" +
                         (fabric.forwarding_entry_bytes ? " and " + std::to_string(t.switches.size()) +
                                                              " x " + std::to_string(nodes) + " LIDs"
                                                        : ""),
                     "", line, column});
  if (const uint64_t files = capture_files(x))
    e.parts.push_back({"capture buffers", mul(files, kCaptureFileBytes),
                       std::to_string(files) + " capture files", "", line, column});
  uint64_t connections = 0;
  MemoryPart bufs{"message buffers", 0, "", "", 0, 0};
  uint64_t largest = 0, most_pairs = 0;
  MemoryPart qps{"QPs", 0, "", "", 0, 0};
  uint64_t flows = 0;
  double sending = 0;
  for (size_t i = 0; i < x.workloads.size(); ++i) {
    const WorkloadConfig& w = x.workloads[i];
    const uint64_t p = pairs(x, w);
    connections = add(connections, p);
    if (w.kind == WorkloadKind::flows) flows = add(flows, p);
    sending += senders_in_flight(w, p);
    if (p >= most_pairs) {  // QPs are pointed at the workload with the most
      most_pairs = p;
      qps.key = "workloads[" + std::to_string(i) + "]";
      qps.line = w.line;
      qps.column = w.column;
    }
    const uint64_t b = buffers(x, w, p);
    bufs.bytes = add(bufs.bytes, b);
    if (b < largest) continue;
    largest = b;
    bufs.key = "workloads[" + std::to_string(i) + "]";
    bufs.line = w.line;
    bufs.column = w.column;
    bufs.detail = "the most: workload " + w.name + ", " + about(b) +
                  (w.kind == WorkloadKind::flows ? " of flows" : " of " + to_string(w.size) + " messages") +
                  (p > 1 ? " over " + std::to_string(p) + " pairs" : "");
  }
  qps.bytes = mul(mul(connections, 2), kQpBytes);
  qps.detail = std::to_string(connections) + " connections, a QP at each end";
  e.parts.push_back(qps);
  if (flows) {
    qps.what = "flows";
    qps.bytes = mul(flows, kFlowBytes);
    qps.detail = std::to_string(flows) + " flows started, their records and programs";
    e.parts.push_back(qps);
  }
  // Until the run stops (a run stopped at once sends nothing).
  if (!x.stop || *x.stop > Time{})
    e.parts.push_back({"frames in flight",
                       static_cast<uint64_t>(sending * static_cast<double>(kInFlightBytes)),
                       "what senders keep on the wires and in queues", "", line, column});
  if (fabric.connection_bytes) {
    qps.what = std::string(fabric.connection_part);
    qps.bytes = mul(mul(connections, 2), fabric.connection_bytes);
    qps.detail = std::to_string(connections) + " connections, one at each end";
    e.parts.push_back(qps);
  }
  if (fabric.setup_floods) {
    // A packet buffer a host, all queued at once at setup.
    qps.what = "neighbour solicitations";
    qps.bytes = mul(mul(connections, hosts > 1 ? hosts - 1 : 1), kPacketBytes);
    qps.detail = std::to_string(connections) + " connections, each solicitation flooded to " +
                 std::to_string(hosts > 1 ? hosts - 1 : 1) + " hosts at setup";
    e.parts.push_back(qps);
  }
  e.parts.push_back(std::move(bufs));
  std::stable_sort(e.parts.begin(), e.parts.end(),
                   [](const MemoryPart& a, const MemoryPart& b) { return a.bytes > b.bytes; });
  for (const MemoryPart& p : e.parts) e.total = add(e.total, p.bytes);
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
