#include "experiment/memory_estimate.hpp"

#include <algorithm>
#include <cstdio>

#include "fabrics/registry.hpp"
#include "workloads/registry.hpp"
#include "workloads/workload_memory.hpp"

namespace rdmasim {

namespace {

// Measured, not derived: peak RSS of runs that vary one thing, divided by
// how many of it there were (bench/memory.py prints them; rounded up).
// Frames queued in ports are not counted (each frame takes a packet buffer
// of its size class, core/packet.hpp: up to link.buffer of frame bytes a
// port), except roce_v1's neighbour solicitations, which every connection
// floods at setup.
constexpr uint64_t kProgramBytes = 8 << 20;  // rdmasim itself: code, libraries, the price catalogue
constexpr uint64_t kHostBytes = 8 * 1024;    // a host: its NIC, port, CPU model, memory map
constexpr uint64_t kRouteEntryBytes = 15;    // per (host, node): next hops, distances, forwarding tables
// One end of a connection: QP, CQs, MRs, the program. A k=8 fat tree's
// all-to-all (16,256 connections) peaks 69 MiB above the same tree without
// one: 2.2 KiB an end.
constexpr uint64_t kQpBytes = 2304;
constexpr uint64_t kPacketBytes = 256 + 64;  // a control frame's packet buffer and header (core/packet.hpp)

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

MemoryEstimate estimate_memory(const ExperimentConfig& x) {
  const TopologyConfig& t = x.topology;
  const uint64_t hosts = t.hosts.size();
  const uint64_t nodes = hosts + t.switches.size() + t.routers.size();
  // Parts of the network are pointed at where the topology begins.
  const int line = t.links.empty() ? 1 : t.links.front().line,
            column = t.links.empty() ? 1 : t.links.front().column;
  MemoryEstimate e;
  e.parts.push_back({"the program", kProgramBytes, "code, libraries, the price catalogue", "", line, column});
  const Fabric::MemoryCosts fabric = fabric_of(x).memory_costs();
  const uint64_t host = kHostBytes + fabric.host_bytes;
  e.parts.push_back({"hosts", sat_mul(hosts, host), std::to_string(hosts) + " hosts", "", line, column});
  e.parts.push_back({"routing tables", sat_mul(sat_mul(hosts, nodes), kRouteEntryBytes),
                     std::to_string(hosts) + " hosts x " + std::to_string(nodes) + " nodes", "", line,
                     column});
  uint64_t connections = 0;
  MemoryPart bufs{"message buffers", 0, "", "", 0, 0};
  uint64_t largest = 0, most_pairs = 0;
  MemoryPart qps{"QPs", 0, "", "", 0, 0};
  for (size_t i = 0; i < x.workloads.size(); ++i) {
    const WorkloadConfig& w = x.workloads[i];
    const WorkloadMemory m = workload_of(w).memory(x, w);
    const uint64_t p = m.connections;
    connections = sat_add(connections, p);
    if (p >= most_pairs) {  // QPs are pointed at the workload with the most
      most_pairs = p;
      qps.key = "workloads[" + std::to_string(i) + "]";
      qps.line = w.line;
      qps.column = w.column;
    }
    const uint64_t b = m.buffer_bytes;
    bufs.bytes = sat_add(bufs.bytes, b);
    if (b < largest) continue;
    largest = b;
    bufs.key = "workloads[" + std::to_string(i) + "]";
    bufs.line = w.line;
    bufs.column = w.column;
    bufs.detail = "the most: workload " + w.name + ", " + about(b) + " " + m.buffers +
                  (p > 1 ? " over " + std::to_string(p) + " pairs" : "");
  }
  qps.bytes = sat_mul(sat_mul(connections, 2), kQpBytes);
  qps.detail = std::to_string(connections) + " connections, a QP at each end";
  e.parts.push_back(qps);
  if (fabric.connection_bytes) {
    qps.what = std::string(fabric.connection_part);
    qps.bytes = sat_mul(sat_mul(connections, 2), fabric.connection_bytes);
    qps.detail = std::to_string(connections) + " connections, one at each end";
    e.parts.push_back(qps);
  }
  if (fabric.setup_floods) {
    // A packet buffer a host, all queued at once at setup.
    qps.what = "neighbour solicitations";
    qps.bytes = sat_mul(sat_mul(connections, hosts > 1 ? hosts - 1 : 1), kPacketBytes);
    qps.detail = std::to_string(connections) + " connections, each solicitation flooded to " +
                 std::to_string(hosts > 1 ? hosts - 1 : 1) + " hosts at setup";
    e.parts.push_back(qps);
  }
  e.parts.push_back(std::move(bufs));
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
