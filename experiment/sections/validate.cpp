// The validate pass: every check that needs more than one section, made
// once all are read. Whatever a run could refuse before it simulates is
// refused here, so `rdmasim validate` and `rdmasim run` agree.
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <unordered_map>

#include "experiment/sections/sections.hpp"
#include "fabrics/ib/ib_fabric.hpp"
#include "fabrics/ib/virtual_lanes.hpp"
#include "fabrics/iba/transport/cc/telemetry.hpp"

namespace rdmasim {

namespace {

// Links joined at every node that forwards (switches, and routers when
// through_routers): two hosts reach each other when one of their links
// shares a group. Per host, its groups, ascending.
std::vector<std::vector<int>> link_groups(const Graph& g, bool through_routers) {
  std::vector<int> parent(static_cast<size_t>(g.link_count()));
  for (size_t i = 0; i < parent.size(); ++i) parent[i] = static_cast<int>(i);
  auto find = [&](int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (int n = g.host_count(); n < g.size(); ++n) {
    if (g.kind(n) == NodeKind::router && !through_routers) continue;
    const auto ports = g.ports(n);
    for (size_t p = 1; p < ports.size(); ++p) parent[find(ports[p].link)] = find(ports[0].link);
  }
  std::vector<std::vector<int>> groups(static_cast<size_t>(g.host_count()));
  for (int h = 0; h < g.host_count(); ++h) {
    for (const Graph::Port& p : g.ports(h)) groups[h].push_back(find(p.link));
    std::sort(groups[h].begin(), groups[h].end());
  }
  return groups;
}

// Is there one group every host of `from` and `to` is in?
bool common_group(const std::vector<std::vector<int>>& groups, const std::vector<int>& from,
                  const std::vector<int>& to) {
  std::vector<int> common = groups[from.front()];
  for (const auto* list : {&from, &to}) {
    for (int h : *list) {
      std::vector<int> both;
      std::set_intersection(common.begin(), common.end(), groups[h].begin(), groups[h].end(),
                            std::back_inserter(both));
      common = std::move(both);
    }
  }
  return !common.empty();
}

// What reachability needs of the graph, each computed once when first asked for.
class Paths {
 public:
  explicit Paths(const Graph& g) : g_(g) {}
  const std::vector<std::vector<int>>& routed() {  // through switches and routers
    if (!routed_) routed_ = link_groups(g_, true);
    return *routed_;
  }
  const std::vector<std::vector<int>>& bridged() {  // through switches only
    if (!bridged_) bridged_ = link_groups(g_, false);
    return *bridged_;
  }
  const ForwardingTable& updown(const std::vector<std::string>& root_names) {
    if (!updown_) {
      std::vector<int> roots;
      for (const std::string& r : root_names) roots.push_back(*g_.find(r));
      updown_ = ib_forwarding(g_, IbRouting::updown, roots);
    }
    return *updown_;
  }

 private:
  const Graph& g_;
  std::optional<std::vector<std::vector<int>>> routed_, bridged_;  // link_groups()
  std::optional<ForwardingTable> updown_;
};

// Keeps the roots that are switches; reports the others.
void ib_roots(ExperimentDraft& d) {
  if (!d.ib_roots || !d.graph) return;
  std::vector<std::string> valid;
  for (size_t i = 0; i < d.ib_roots->value.size(); ++i) {
    const YAML::Node n = d.ib_roots->value[i];
    const auto v = n.IsScalar() ? d.graph->find(n.Scalar()) : std::nullopt;
    if (v && d.graph->kind(*v) == NodeKind::switch_node)
      valid.push_back(n.Scalar());
    else if (n.IsScalar())
      d.c.error(n, index_path(d.ib_roots->path, i), "'" + n.Scalar() + "' is not a switch of the topology");
  }
  d.x.ib.roots = std::move(valid);
}

void capture_nodes(ExperimentDraft& d) {
  if (d.x.capture.mode != CaptureMode::list || !d.capture_list) return;
  const Entry& p = *d.capture_list;
  std::map<std::string, int> seen;
  for (size_t i = 0; i < p.value.size(); ++i) {
    const std::string path = index_path(p.path, i);
    auto n = d.c.name(p.value[i], path, "a node name");
    if (!n) continue;
    if (!seen.emplace(*n, 0).second)
      d.c.error(p.value[i], path, "'" + *n + "' is listed twice");
    else if (d.graph && !d.graph->find(*n))
      d.c.error(p.value[i], path, d.unknown_node(*n));
    else
      d.x.capture.nodes.push_back(*n);
  }
}

void vlan_hosts(ExperimentDraft& d) {
  for (const Entry& e : d.vlan_hosts) {
    const std::string n = e.key.Scalar();
    if (d.graph && !d.graph->find(n))
      d.c.error(e.key, e.path, d.unknown_node(n));
    else if (d.graph && !d.graph->is_host(*d.graph->find(n)))
      d.c.error(e.key, e.path,
                "'" + n + "' is not a host: only hosts are put in VLANs (switch ports carry them all)");
  }
}

void ib_limits(ExperimentDraft& d) {
  const YAML::Node& at = d.topology->value;
  const std::string& path = d.topology->path;
  const TopologyConfig& t = d.x.topology;
  // Unicast LIDs are 0x0001..0xBFFF.
  const size_t nodes = t.hosts.size() + t.switches.size() + t.routers.size();
  if (nodes > 0xBFFF)
    d.c.error(at, path,
              "ib gives every node a unicast LID: at most 49151 nodes, got " + std::to_string(nodes));
  std::unordered_map<std::string, int> ports;
  for (const LinkSpec& l : t.links) ++ports[l.a], ++ports[l.b];
  for (const std::string& s : t.switches) {
    // Forwarding tables hold 8-bit port numbers; 0 is the switch itself and 255 is reserved.
    if (ports[s] > 254) {
      d.c.error(at, path,
                "IB switch '" + s + "' would need " + std::to_string(ports[s]) +
                    " ports; an IB switch has at most 254 (8-bit port numbers, 0 and 255 reserved)");
      break;
    }
  }
}

// IBA 7.9: a VL's receive buffer must hold the largest packet, or nothing
// could ever be sent on it; a port's egress queue (the same `buffer`) takes
// the two packets an HCA keeps queued.
void ib_buffers(ExperimentDraft& d) {
  const uint8_t vls = modelled_data_vls(d.x.ib.vls);
  const uint64_t need = ib_max_packet(path_mtu(d.x));
  const LinkSpec* reported = nullptr;  // a generated topology's links share one place: say it once
  for (size_t i = 0; i < d.x.topology.links.size(); ++i) {
    const LinkSpec& l = d.x.topology.links[i];
    const uint64_t buffer = l.config.buffer.count();
    if (buffer / vls >= need && buffer >= 2 * need) continue;
    if (reported && reported->line == l.line && reported->column == l.column) continue;
    reported = &l;
    const bool generated = d.x.topology.generated != GeneratorKind::none;
    d.c.error(d.link_nodes[i], generated ? "topology.generate" : index_path("topology.links", i),
              "link " + l.a + " - " + l.b + ": buffer " + to_string(l.config.buffer) +
                  " is too small for ib: each of the " + std::to_string(vls) + " data VLs needs room for a " +
                  std::to_string(need) + "-byte packet (IBA 7.9), so at least " +
                  to_string(Bytes(std::max<uint64_t>(need * vls, 2 * need))));
  }
}

// Can every sender reach its receiver (and back)?
void reachability(ExperimentDraft& d, Paths& paths, const YAML::Node& v, const std::string& path,
                  const WorkloadConfig& w) {
  const Graph& g = *d.graph;
  const auto& routed = paths.routed();
  std::vector<int> from, to;
  for (const std::string& n : w.from) from.push_back(*g.find(n));
  for (const std::string& n : w.to) to.push_back(*g.find(n));
  // RoCE v1: hosts in different VLANs are in different broadcast domains.
  if (d.x.fabric == FabricKind::roce_v1 && d.x.vlan) {
    for (const std::string& a : w.from) {
      for (const std::string& b : w.to) {
        if (a != b && d.x.vlan->of(a) != d.x.vlan->of(b)) {
          d.c.error(v, path,
                    a + " (VLAN " + std::to_string(d.x.vlan->of(a)) + ") and " + b + " (VLAN " +
                        std::to_string(d.x.vlan->of(b)) +
                        ") are in different broadcast domains: roce_v1 frames cannot leave their VLAN; "
                        "use roce_v2 or put them in one VLAN");
          return;
        }
      }
    }
  }
  const bool updown = d.x.fabric == FabricKind::ib && d.x.ib.routing == IbRouting::updown;
  // The common case, all in one network, needs no look at every pair.
  if (!updown && common_group(d.x.fabric == FabricKind::roce_v1 ? paths.bridged() : routed, from, to)) return;
  for (int a : from) {
    for (int b : to) {
      if (a == b) continue;
      const bool connected = common_group(routed, {a}, {b});
      if (!connected) {
        d.c.error(v, path,
                  g.name(a) + " cannot reach " + g.name(b) + ": no path through switches and routers");
        return;
      }
      if (d.x.fabric == FabricKind::roce_v1 && !common_group(paths.bridged(), {a}, {b})) {
        d.c.error(v, path,
                  g.name(a) + " and " + g.name(b) +
                      " are in different broadcast domains (a router separates them): roce_v1 frames "
                      "cannot be routed; use roce_v2 or put them on one L2 network");
        return;
      }
      if (updown) {
        const ForwardingTable& table = paths.updown(d.x.ib.roots);
        if (!ib_path(g, table, a, b) || !ib_path(g, table, b, a)) {
          d.c.error(v, path,
                    g.name(a) + " and " + g.name(b) +
                        " have no legal up*/down* path between them; name the top switches in ib.roots "
                        "or use ib.routing: min_hop");
          return;
        }
      }
    }
  }
}

// The simulated clock holds 2^63 ps. Each time in the file is at most
// kMaxTimeValue (yaml_reader.hpp); what the model adds up from them before
// any workload runs must leave most of the clock to the run: the latest
// time given (stop, a start, a fault, the end of flow arrivals), connection setup (three crossings of
// the path at link.delay a hop, apps/runner.cpp) and a round trip across
// the longest path a frame could take (a path visits each switch and
// router at most once; a hop costs its link's delay, the switch latency and
// the largest frame's serialisation at the slowest rate).
constexpr long double kClockRange = 9223372036854775807.0L;  // ps

long double ps(Time t) { return static_cast<long double>(t.count()); }
// A duration that may be far past what Time holds, in seconds.
std::string seconds(long double ps) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3Lgs", ps / 1e12L);
  return b;
}

void clock_range(ExperimentDraft& d) {
  const ExperimentConfig& x = d.x;
  if (!d.topology || x.topology.links.empty()) return;
  const long double hops = 1.0L + static_cast<long double>(x.topology.switches.size() + x.topology.routers.size());
  Time delay, frame_time;
  for (const LinkSpec& l : x.topology.links) {
    delay = std::max(delay, l.config.delay);
    // The largest frame: the MTU and at most 128 bytes of headers (Ethernet, VLAN, IPv6 or GRH, UDP or
    // TCP, BTH and extensions, CRCs).
    frame_time = std::max(frame_time, l.config.bandwidth.tx_time(l.config.mtu + 128));
  }
  Time latest = x.stop.value_or(Time());
  for (const WorkloadConfig& w : x.workloads)  // flows arrive for `duration`; compute works for `work`
    latest = std::max(latest, w.start + std::max(w.flows.duration, w.work));
  for (const FaultConfig& f : x.faults) latest = std::max(latest, f.at);
  const long double hop = ps(delay) + ps(x.switch_config.latency) + ps(frame_time);
  const long double setup = 3 * hops * ps(x.link.delay);
  const long double need = ps(latest) + setup + 2 * hops * hop;
  if (need <= kClockRange / 2) return;
  d.c.error(d.topology->value, d.topology->path,
            "times this large cannot be simulated: a round trip over up to " +
                std::to_string(static_cast<long long>(hops)) + " hops of up to " + seconds(hop) +
                " each, with connection setup and the latest start, fault or stop, comes to " + seconds(need) +
                ", past half the simulated clock's range (2^63 ps, about 106 days); shorten link delays, "
                "switch.latency or the times given");
}

// Without `stop`, every workload must be able to end within the longest
// `stop` there may be (kMaxTimeValue). Refused: a workload that never ends
// (RC SENDs into a receive queue that is never filled, with rnr_retry 7,
// retrying forever: IBA 9.7.5.2.8), and one whose count alone needs
// longer: each message of a pair crosses the sender's link after the
// previous one, so a pair takes at least count x the message's bytes (and
// the smallest header, 26 bytes) at the fastest link's rate; ping-pong and
// latency kinds wait a round trip (two links each way) per message.
// What this cannot foresee (loss, congestion, faults) is bounded by
// capture.max_bytes and the drain after the workloads end (the runner).
void endless(ExperimentDraft& d) {
  const ExperimentConfig& x = d.x;
  if (x.stop || x.topology.links.empty()) return;
  DataRate fastest;
  Time shortest = Time::max();
  for (const LinkSpec& l : x.topology.links) {
    fastest = std::max(fastest, l.config.bandwidth);
    shortest = std::min(shortest, l.config.delay);
  }
  for (const auto& r : d.workloads_read) {
    const WorkloadConfig& w = x.workloads[r.index];
    if (w.kind == WorkloadKind::compute) continue;  // its `work` is a time, bounded as every time is
    const YAML::Node count_at = r.node["count"] ? r.node["count"] : r.node;
    // A ping-pong's receives are its own (it always posts them).
    const bool consumes = (w.op == "send" || w.op == "send_imm" || w.op == "rdma_write_imm") &&
                          w.kind != WorkloadKind::pingpong;
    if (!w.post_recvs && consumes && w.qp == QpType::rc && w.rnr_retry == 7 && x.fabric != FabricKind::iwarp) {
      d.c.error(r.node["post_recvs"], r.path + ".post_recvs",
                "this workload never ends: its receiver posts no receive buffers, so every " + w.op +
                    " is answered with an RNR NAK, and rnr_retry 7 retries forever (IBA 9.7.5.2.8); give stop, "
                    "or an rnr_retry below 7");
      continue;
    }
    const bool waits = w.kind == WorkloadKind::pingpong || w.kind == WorkloadKind::write_lat ||
                       w.kind == WorkloadKind::read_lat || w.kind == WorkloadKind::send_lat ||
                       w.kind == WorkloadKind::atomic_lat;
    const long double per_message =
        std::max(ps(fastest.tx_time(std::min<uint64_t>(w.size.count(), uint64_t{1} << 31) + 26)),
                 waits ? 4 * ps(shortest) : 0.0L);
    const long double need = static_cast<long double>(w.count) * per_message;
    if (need <= ps(kMaxTimeValue)) continue;
    d.c.error(count_at, r.path + ".count",
              "without stop this cannot end within " + to_string(kMaxTimeValue) +
                  " of simulated time (the longest stop may be): " + std::to_string(w.count) +
                  " messages take at least " + seconds(need) + "; give stop, or a smaller count");
  }
}

}  // namespace

// The fabrics an algorithm can run on: what it reacts to must exist there.
void congestion_control(ExperimentDraft& d) {
  const CcAlgorithm a = d.x.cc.algorithm;
  if (a == CcAlgorithm::none) return;
  const FabricKind f = d.x.fabric;
  std::string why;
  switch (a) {
    case CcAlgorithm::dcqcn:
    case CcAlgorithm::dctcp:
      if (f != FabricKind::roce_v2) why = "it reacts to ECN marks in the IP header, which only roce_v2 carries";
      break;
    case CcAlgorithm::hpcc:
      if (f != FabricKind::roce_v2)
        why = "its switch telemetry rides in an IPv4 option, which only roce_v2 carries";
      else if (d.x.ip != IpVersion::ipv4)
        why = "its switch telemetry rides in an IPv4 option: set ip: ipv4";
      break;
    case CcAlgorithm::timely:
    case CcAlgorithm::swift:
      if (f != FabricKind::roce_v1 && f != FabricKind::roce_v2) why = "it runs on roce_v1 and roce_v2 NICs";
      break;
    case CcAlgorithm::ib_cca:
      if (f != FabricKind::ib) why = "it is InfiniBand's (IBA annex A10): FECN/BECN at ib switches and NICs";
      break;
    case CcAlgorithm::none:
      break;
  }
  if (why.empty() && a == CcAlgorithm::hpcc) {
    // Each hop reports its link rate as an index into a table of standard rates.
    for (const auto& l : d.x.topology.links) {
      if (IntHop::rate_index(l.config.bandwidth)) continue;
      why = "its switch telemetry reports link rates from a table of standard Ethernet rates (1, 2.5, 5, 10, 25, "
            "40, 50, 56, 100, 200, 400, 800, 1600 Gbps), and a link runs at " + to_string(l.config.bandwidth);
      break;
    }
  }
  if (why.empty()) return;
  const std::string msg = std::string(to_string(a)) + " cannot run on fabric " + std::string(to_string(f)) + ": " +
                          why + (f == FabricKind::iwarp ? " (iwarp: tcp.congestion_control)" : "");
  if (d.cc_algorithm)
    d.c.error(d.cc_algorithm->value, d.cc_algorithm->path, msg);
  else if (d.ip_version)
    d.c.error(d.ip_version->value, d.ip_version->path, msg);
}

// IRN's extension header rides in an IPv4 option of RoCE v2 frames
// (docs/reliability.md#irn-loss-recovery), which HPCC's telemetry fills.
static void loss_recovery(ExperimentDraft& d) {
  if (d.x.loss_recovery != LossRecovery::irn) return;
  std::string why;
  if (d.x.fabric != FabricKind::roce_v2)
    why = "its extension header rides in an IPv4 option, which only roce_v2 carries";
  else if (d.x.ip != IpVersion::ipv4)
    why = "its extension header rides in an IPv4 option: set ip: ipv4";
  else if (d.x.cc.algorithm == CcAlgorithm::hpcc)
    why = "its extension header and HPCC's telemetry would both need the IPv4 options' 40 bytes";
  if (why.empty()) return;
  const std::string msg = "irn cannot run on fabric " + std::string(to_string(d.x.fabric)) + ": " + why;
  if (d.loss_recovery) d.c.error(d.loss_recovery->value, d.loss_recovery->path, msg);
}

void validate(ExperimentDraft& d) {
  congestion_control(d);
  loss_recovery(d);
  ib_roots(d);
  if (d.graph) {
    Paths paths(*d.graph);
    for (const auto& w : d.workloads_read)
      if (d.x.workloads[w.index].kind != WorkloadKind::compute)  // a process on one host: no path to check
        reachability(d, paths, w.node, w.path, d.x.workloads[w.index]);
  }
  capture_nodes(d);
  vlan_hosts(d);
  if (d.x.fabric == FabricKind::ib && d.topology) {
    ib_limits(d);
    ib_buffers(d);
  }
  clock_range(d);
  endless(d);
}

}  // namespace rdmasim
