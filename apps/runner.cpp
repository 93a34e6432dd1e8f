#include "apps/runner.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "apps/network.hpp"
#include "cost/bom.hpp"
#include "pcap/capture_set.hpp"
#include "workloads/workload.hpp"

namespace rdmasim {

namespace {

using nlohmann::json;

NicConfig nic_config(const HostConfig& h) {
  NicConfig n;
  n.pcie_latency = h.pcie.latency;
  n.doorbell = h.doorbell;
  return n;
}

FabricBuilder builder_for(FabricKind f) {
  switch (f) {
    case FabricKind::roce_v2:
      return roce_v2_builder();
    case FabricKind::roce_v1:
      return roce_v1_builder();
    case FabricKind::ib:
      return ib_builder();
    case FabricKind::iwarp:
      return iwarp_builder();
  }
  throw std::runtime_error("unknown fabric");
}

void wire_links(Network& net) {
  const auto& links = net.cfg.topology.links;
  std::vector<int> used(net.hosts.size(), 0);
  for (size_t l = 0; l < links.size(); ++l) {
    const Graph::Link& gl = net.graph.link(static_cast<int>(l));
    auto port_of = [&](int node) -> Port& {
      if (net.graph.is_host(node)) {
        if (used[node]++)
          throw std::runtime_error(net.cfg.file.string() + ":" + std::to_string(links[l].line) + ":" +
                                   std::to_string(links[l].column) + ": topology.links: host '" +
                                   net.graph.name(node) + "' has more than one link; a host has one NIC port");
        return net.nodes[node]->port(0);
      }
      return net.nodes[node]->add_port();
    };
    Port& a = port_of(gl.a);
    Port& b = port_of(gl.b);
    const LinkConfig& c = links[l].config;
    LinkParams p;
    p.rate = c.bandwidth;
    p.delay = c.delay;
    p.buffer_bytes = c.buffer.count();
    p.loss = c.loss;
    p.wire_overhead = net.wire_overhead;
    Port::connect(a, b, p, net.cfg.seed ^ (0x9E3779B97F4A7C15ull * (l + 1)));
    net.links.push_back({&a, &b});
  }
}

json latency_json(std::vector<int64_t> v) {
  if (v.empty()) return {{"min", 0}, {"p50", 0}, {"p99", 0}, {"max", 0}, {"mean", 0}};
  std::sort(v.begin(), v.end());
  auto pct = [&](double q) {
    const size_t i = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5));
    return static_cast<double>(v[i]) / 1e3;
  };
  double sum = 0;
  for (int64_t x : v) sum += static_cast<double>(x);
  return {{"min", static_cast<double>(v.front()) / 1e3},
          {"p50", pct(0.50)},
          {"p99", pct(0.99)},
          {"max", static_cast<double>(v.back()) / 1e3},
          {"mean", sum / static_cast<double>(v.size()) / 1e3}};
}

std::string qp_name(QpType t) { return std::string(to_string(t)); }

json join_names(const std::vector<std::string>& v) {
  if (v.size() == 1) return v[0];
  return v;
}

}  // namespace

json run_experiment(const ExperimentConfig& cfg, const std::filesystem::path& dir) {
  Network net(cfg);
  FabricBuilder builder = builder_for(cfg.fabric);

  // Nodes: hosts first (graph order), then the fabric's switches.
  net.nodes.resize(net.graph.size());
  const NicConfig nic = nic_config(cfg.host);
  for (int h = 0; h < net.graph.host_count(); ++h) {
    auto host = std::make_unique<Host>(net.sim, net.pool, net.graph.name(h), nic, cfg.host);
    net.hosts.push_back(host.get());
    net.nodes[h] = std::move(host);
  }
  builder.create_nodes(net);
  wire_links(net);
  builder.finish(net);
  uint32_t mtu = cfg.link.mtu;
  for (const auto& l : cfg.topology.links) mtu = std::min(mtu, l.config.mtu);
  net.mtu = mtu;
  if (cfg.fabric != FabricKind::iwarp) {
    const ibv_mtu active = mtu >= 4096 ? IBV_MTU_4096 : mtu >= 2048 ? IBV_MTU_2048 : mtu >= 1024 ? IBV_MTU_1024
                           : mtu >= 512 ? IBV_MTU_512 : IBV_MTU_256;
    for (Host* h : net.hosts) h->nic().set_active_mtu(active);
  }

  // Captures.
  std::unique_ptr<CaptureSet> captures;
  if (cfg.capture.mode != CaptureMode::none) {
    captures = std::make_unique<CaptureSet>(dir, net.linktype, net.sealer, cfg.capture.snaplen);
    for (int n = 0; n < net.graph.size(); ++n) {
      bool on = false;
      switch (cfg.capture.mode) {
        case CaptureMode::hosts: on = net.graph.is_host(n); break;
        case CaptureMode::all: on = true; break;
        case CaptureMode::list:
          on = std::find(cfg.capture.nodes.begin(), cfg.capture.nodes.end(), net.graph.name(n)) !=
               cfg.capture.nodes.end();
          break;
        case CaptureMode::none: break;
      }
      if (on) captures->capture(*net.nodes[n]);
    }
  }

  // Faults.
  for (const FaultConfig& f : cfg.faults) {
    Network::LinkEnds ends = net.links.at(f.link);
    const bool up = f.up;
    net.sim.at(f.at, [ends, up] { Port::set_link_up(*ends.a, up); });
  }

  // Workloads.
  WorkloadEnv env{net.sim, cfg, nullptr, net.address, nullptr, net.mtu};
  env.host = [&net](const std::string& name) -> Host* {
    auto n = net.graph.find(name);
    return n && net.graph.is_host(*n) ? net.hosts[*n] : nullptr;
  };
  // Connection management (RDMA CM's REQ, REP, RTU) crosses the path three
  // times before the QPs are ready; model it from the path's propagation delay.
  const NextHops hops = ecmp_next_hops(net.graph);
  env.connect_time = [&net, &hops](Host& a, Host& b) {
    const int d = hops.distance(net.host_index(a), net.host_index(b));
    return net.cfg.link.delay * 3 * std::max(d, 1);
  };
  std::vector<std::unique_ptr<WorkloadRun>> runs;
  for (size_t i = 0; i < cfg.workloads.size(); ++i)
    runs.push_back(std::make_unique<WorkloadRun>(env, cfg.workloads[i], cfg.seed ^ (i * 0x2545F4914F6CDD1Dull)));
  for (auto& r : runs) r->start();

  if (cfg.stop)
    net.sim.run(*cfg.stop);
  else
    net.sim.run();

  if (captures) captures->close();

  // results.json
  json out;
  out["experiment"] = cfg.name;
  out["fabric"] = std::string(to_string(cfg.fabric));
  out["seed"] = cfg.seed;
  out["end_time_ps"] = net.sim.now().count();
  out["events"] = net.sim.events_run();
  out["packets_in_use"] = net.pool.in_use();
  json wl = json::array();
  for (auto& r : runs) {
    const WorkloadConfig& w = r->config();
    const FlowStats s = r->result();
    const double secs = (s.end - s.start).to_s();
    json j;
    j["name"] = w.name;
    j["kind"] = std::string(to_string(w.kind));
    j["op"] = w.op;
    j["from"] = join_names(w.from);
    j["to"] = join_names(w.to);
    j["qp"] = qp_name(w.qp);
    j["size"] = w.size.count();
    j["ops"] = s.ops;
    j["bytes"] = s.bytes;
    j["completions"] = s.completions;
    if (!s.recv_completions.empty()) j["receiver_errors"] = s.recv_completions;
    j["start_ps"] = s.start.count();
    j["end_ps"] = s.end.count();
    j["throughput_gbps"] = secs > 0 ? static_cast<double>(s.bytes) * 8 / secs / 1e9 : 0.0;
    j["latency_ns"] = latency_json(s.latency_ps);
    j["data_verified"] = s.data_verified;
    j["finished"] = s.finished;
    wl.push_back(std::move(j));
  }
  out["workloads"] = std::move(wl);
  json ports = json::array();
  for (const auto& node : net.nodes) {
    for (size_t p = 0; p < node->port_count(); ++p) {
      const PortStats& st = node->port(p).stats();
      ports.push_back({{"node", node->name()},
                       {"port", p},
                       {"tx_frames", st.tx_frames},
                       {"rx_frames", st.rx_frames},
                       {"tx_bytes", st.tx_bytes},
                       {"rx_bytes", st.rx_bytes},
                       {"drops", st.drops},
                       {"pause_frames", st.pause_frames},
                       {"ecn_marks", st.ecn_marks},
                       {"credit_wait_ps", st.credit_wait.count()}});
    }
  }
  out["ports"] = std::move(ports);
  json hosts = json::array();
  uint64_t cpu_busy_ps = 0;
  for (Host* h : net.hosts) {
    cpu_busy_ps += static_cast<uint64_t>(h->cpu_busy().count());
    hosts.push_back({{"name", h->name()},
                     {"cpu_busy_ps", h->cpu_busy().count()},
                     {"interrupts", h->interrupts()},
                     {"completion", std::string(to_string(cfg.host.completion))},
                     {"nic_frames_sent", h->nic().stats().frames_sent},
                     {"nic_frames_received", h->nic().stats().frames_received},
                     {"cnps_sent", h->nic().stats().cnps_sent},
                     {"cnps_received", h->nic().stats().cnps_received}});
  }
  out["hosts"] = std::move(hosts);
  out["cost"] = experiment_cost(cfg, cpu_busy_ps, static_cast<uint64_t>(net.sim.now().count()));
  // Programs still waiting (a flow whose peer failed) go before the hosts they point into.
  net.sim.clear();
  return out;
}

}  // namespace rdmasim
