// The validate pass: every check that needs more than one section, made
// once all are read. Whatever a run could refuse before it simulates is
// refused here, so `rdmasim validate` and `rdmasim run` agree. A fabric's
// own checks are its (fabrics/fabric.hpp).
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>

#include "experiment/sections/sections.hpp"
#include "fabrics/registry.hpp"
#include "topologies/reachability.hpp"
#include "workloads/registry.hpp"

namespace rdmasim {

namespace {

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

// capture.timeseries.ports: NODE (all its ports) or NODE:PORT, each once.
void timeseries_ports(ExperimentDraft& d) {
  if (!d.timeseries_ports || !d.x.capture.timeseries) return;
  const Entry& p = *d.timeseries_ports;
  std::map<std::string, int> seen;  // node -> its line, for a node listed whole
  std::map<std::pair<std::string, uint16_t>, int> seen_ports;
  for (size_t i = 0; i < p.value.size(); ++i) {
    const std::string path = index_path(p.path, i);
    const YAML::Node& v = p.value[i];
    auto s = d.c.scalar(v, path, "NODE or NODE:PORT");
    if (!s) continue;
    const size_t colon = s->rfind(':');
    const std::string node = s->substr(0, colon);
    std::optional<uint16_t> port;
    if (colon != std::string::npos) {
      const std::string digits = s->substr(colon + 1);
      if (digits.empty() || digits.size() > 5 ||
          digits.find_first_not_of("0123456789") != std::string::npos) {
        d.c.error(v, path, "expected NODE or NODE:PORT (a port number from 0), got " + describe(v));
        continue;
      }
      port = static_cast<uint16_t>(std::min(std::stoul(digits), 65535UL));
    }
    std::optional<int> n = d.graph ? d.graph->find(node) : std::nullopt;
    if (d.graph && !n) {
      d.c.error(v, path, d.unknown_node(node));
      continue;
    }
    if (n && port && *port >= d.graph->ports(*n).size()) {
      const size_t count = d.graph->ports(*n).size();
      d.c.error(v, path,
                node + " has no port " + std::to_string(*port) + "; its ports are 0.." +
                    std::to_string(count - 1) + ", in the order its links appear in topology.links");
      continue;
    }
    const int line = mark_of(v).line + 1;
    if (auto whole = seen.find(node); whole != seen.end()) {
      d.c.error(v, path,
                "'" + *s + "' is already sampled: " + node + " is listed whole at line " +
                    std::to_string(whole->second));
      continue;
    }
    if (!port) {
      seen.emplace(node, line);
      bool overlaps = false;
      for (const auto& [k, at] : seen_ports)
        if (k.first == node) {
          d.c.error(v, path,
                    "'" + node + "' is listed whole after its port " + std::to_string(k.second) +
                        " at line " + std::to_string(at));
          overlaps = true;
          break;
        }
      if (overlaps) continue;
    } else if (auto [at, fresh] = seen_ports.emplace(std::pair(node, *port), line); !fresh) {
      d.c.error(v, path, "'" + *s + "' is listed twice (first at line " + std::to_string(at->second) + ")");
      continue;
    }
    d.x.capture.timeseries->ports.push_back({node, port});
  }
}

// capture.timeseries.qps: workload names, each once.
void timeseries_qps(ExperimentDraft& d) {
  if (!d.timeseries_qps || !d.x.capture.timeseries) return;
  const Entry& q = *d.timeseries_qps;
  std::vector<std::string_view> names;
  for (const WorkloadConfig& w : d.x.workloads) names.push_back(w.name);
  std::map<std::string, int> seen;
  for (size_t i = 0; i < q.value.size(); ++i) {
    const std::string path = index_path(q.path, i);
    auto n = d.c.name(q.value[i], path, "a workload name");
    if (!n) continue;
    if (std::find(names.begin(), names.end(), *n) == names.end())
      d.c.error(q.value[i], path,
                "unknown workload '" + *n + "'" + suggestion(*n, names) +
                    "; a workload is named by its name key (w0, w1, ... in order when not given)");
    else if (!seen.emplace(*n, 0).second)
      d.c.error(q.value[i], path, "'" + *n + "' is listed twice");
    else
      d.x.capture.timeseries->workloads.push_back(*n);
  }
}

// Can every sender reach its receiver (and back)?
void reachability(ExperimentDraft& d, const Fabric& fabric, Paths& paths, const YAML::Node& v,
                  const std::string& path, const WorkloadConfig& w) {
  const Graph& g = *d.graph;
  std::vector<int> from, to;
  for (const std::string& n : w.from) from.push_back(*g.find(n));
  for (const std::string& n : w.to) to.push_back(*g.find(n));
  if (const std::string why = fabric.scope_error(d.x, w); !why.empty()) return d.c.error(v, path, why);
  // The common case, all in one network, needs no look at every pair.
  if (fabric.reaches_all(d.x, paths, from, to)) return;
  for (int a : from) {
    for (int b : to) {
      if (a == b) continue;
      if (!common_group(paths.routed(), {a}, {b}))
        return d.c.error(v, path,
                         g.name(a) + " cannot reach " + g.name(b) + ": no path through switches and routers");
      if (const std::string why = fabric.pair_error(d.x, paths, a, b); !why.empty())
        return d.c.error(v, path, why);
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

void clock_range(ExperimentDraft& d) {
  const ExperimentConfig& x = d.x;
  if (!d.topology || x.topology.links.empty()) return;
  const long double hops =
      1.0L + static_cast<long double>(x.topology.switches.size() + x.topology.routers.size());
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
                std::to_string(static_cast<long long>(hops)) + " hops of up to " + seconds_text(hop) +
                " each, with connection setup and the latest start, fault or stop, comes to " +
                seconds_text(need) +
                ", past half the simulated clock's range (2^63 ps, about 106 days); shorten link delays, "
                "switch.latency or the times given");
}

// "; dcqcn runs on roce_v2": the fabrics that `refuses` refuses nothing
// of, from the registry; "" when none does.
template <class Refuses>
std::string runs_on(std::string_view what, Refuses refuses) {
  const std::string names = fabric_list([&](const Fabric& f) { return refuses(f).empty(); });
  return names.empty() ? names : "; " + std::string(what) + " runs on " + names;
}

// The fabric says why its wire cannot carry what the algorithm reacts to
// (checks that need more than the algorithm are its `validate`).
void congestion_control(ExperimentDraft& d, const Fabric& fabric) {
  const CcAlgorithm a = d.x.cc.algorithm;
  const std::string why = fabric.cc_error(a);
  if (why.empty() || !d.cc_algorithm) return;
  d.c.error(d.cc_algorithm->value, d.cc_algorithm->path,
            std::string(to_string(a)) + " cannot run on fabric " + d.x.fabric + ": " + why +
                runs_on(to_string(a), [a](const Fabric& f) { return f.cc_error(a); }));
}

void loss_recovery(ExperimentDraft& d, const Fabric& fabric) {
  const LossRecovery r = d.x.loss_recovery;
  const std::string why = fabric.recovery_error(r);
  if (why.empty() || !d.loss_recovery) return;
  d.c.error(d.loss_recovery->value, d.loss_recovery->path,
            std::string(to_string(r)) + " cannot run on fabric " + d.x.fabric + ": " + why +
                runs_on(to_string(r), [r](const Fabric& f) { return f.recovery_error(r); }));
}

// A workload that starts at or after the stop runs nothing (a program
// there ends "never started", exit 4). Legal, as a sweep over `stop` may
// make it so, but rarely meant: said as a warning at its `start`.
void starts_after_stop(ExperimentDraft& d) {
  if (!d.x.stop) return;
  for (const auto& w : d.workloads_read) {
    const WorkloadConfig& c = d.x.workloads[w.index];
    if (c.start < *d.x.stop) continue;
    const YAML::Node at = w.node.IsMap() ? w.node["start"] : YAML::Node();
    d.c.warnings().push_back(d.c.locate(at ? at : w.node, at ? w.path + ".start" : w.path,
                                        "workload '" + c.name + "' starts at " + to_string(c.start) +
                                            ", not before stop (" + to_string(*d.x.stop) +
                                            "): it will not run"));
  }
}

}  // namespace

void validate(ExperimentDraft& d, const std::vector<std::unique_ptr<Section>>& sections) {
  for (const auto& s : sections) s->validate(d);
  const Fabric& fabric = fabric_of(d.x);
  congestion_control(d, fabric);
  loss_recovery(d, fabric);
  if (d.graph && !d.links_incomplete) {
    Paths paths(*d.graph);
    for (const auto& w : d.workloads_read)
      if (d.x.workloads[w.index].kind != WorkloadKind::compute)  // a process on one host: no path to check
        reachability(d, fabric, paths, w.node, w.path, d.x.workloads[w.index]);
  }
  capture_nodes(d);
  timeseries_ports(d);
  timeseries_qps(d);
  fabric.validate(d);
  clock_range(d);
  starts_after_stop(d);
  for (size_t i = 0; i < d.workloads_read.size(); ++i)
    workload_of(d.x.workloads[d.workloads_read[i].index]).validate(d, i);
}

}  // namespace rdmasim
