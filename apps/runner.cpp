#include "apps/runner.hpp"

#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "apps/csv.hpp"
#include "apps/output_dir.hpp"
#include "apps/progress.hpp"
#include "apps/report.hpp"
#include "apps/run_extensions.hpp"
#include "apps/timeseries.hpp"
#include "core/errors.hpp"
#include "cost/bom.hpp"
#include "fabrics/network.hpp"
#include "fabrics/pfc_deadlocks.hpp"
#include "fabrics/registry.hpp"
#include "nodes/host/cpu/trace.hpp"
#include "parallel/messages.hpp"
#include "parallel/parallel_run.hpp"
#include "parallel/spanning_flows.hpp"
#include "parallel/spanning_pairs.hpp"
#include "parallel/split_checks.hpp"
#include "pcap/capture_set.hpp"
#include "workloads/registry.hpp"
#include "workloads/run_extension.hpp"
#include "workloads/workload.hpp"
#include "workloads/workload_results.hpp"

namespace rdmasim {

namespace {

using nlohmann::json;
using namespace literals;

// hosts[].cores: per core, the time in each category, adding up to the run's end.
json cores_json(const Cpu& cpu) {
  json cores = json::array();
  for (int c = 0; c < cpu.cores(); ++c) {
    const CpuTimes t = cpu.times(c);
    json j = json::object();
    for (size_t u = 0; u < kCpuUses; ++u)
      j[std::string(cpu_use_name(static_cast<CpuUse>(u))) + "_ps"] = t[u].count();
    cores.push_back(std::move(j));
  }
  return cores;
}

// trace/<host>.json and trace/<host>.svg: each host's CPU timeline.
void write_cpu_traces(const Network& net, const std::vector<std::vector<CpuSegment>>& traces,
                      const std::filesystem::path& dir, const ParallelRun* par) {
  const auto tdir = dir / "trace";
  std::error_code ec;
  std::filesystem::create_directories(tdir, ec);
  if (ec) throw OutputError(tdir.string() + ": cannot create: " + ec.message());
  const CaptureConfig& c = net.cfg.capture;
  const Time to = std::min(c.cpu_trace_to, net.sim.now());
  for (size_t i = 0; i < net.hosts.size(); ++i) {
    if (par && !par->owns(static_cast<int>(i))) continue;  // its rank writes it
    const Host& h = *net.hosts[i];
    write_file_atomic(tdir / (h.name() + ".json"), cpu_trace_json(h.name(), h.cpu().cores(), traces[i]));
    write_file_atomic(tdir / (h.name() + ".svg"),
                      cpu_trace_svg(h.name(), h.cpu().cores(), traces[i], c.cpu_trace_from, to));
  }
}

// latency.csv rows: every sample, in the order the operations completed.
std::string latency_csv_rows(const std::string& workload, const std::vector<int64_t>& ps) {
  std::string out;
  out.reserve(ps.size() * (workload.size() + 20));
  for (size_t i = 0; i < ps.size(); ++i)
    out += fmt::format("{},{},{:.3f}\n", workload, i, static_cast<double>(ps[i]) / 1e3);
  return out;
}

// Once every workload has finished (done or failed), a run is over: what is
// still scheduled can change no result. Left alone it may never end: PAUSE
// refreshes between switches of a PFC deadlock (a cycle of paused queues)
// go on forever. So the run stops `kDrain` after the last workload
// finished, and says why; a normal run empties its queue long before (the
// last ACKs and TCP's, well under 200 us in every example). Workloads are
// looked at every `kCheckEvery` of simulated time: running in slices
// changes nothing, as events keep their order and times.
constexpr Time kCheckEvery = 100_us;
constexpr Time kDrain = 1_ms;

// The unloaded cost of the path from host a to host b that ECMP's first
// choice at every hop takes (kind: flows, ideal FCT).
PathCost path_cost(const Network& net, const HostPaths& paths, int a, int b) {
  PathCost c{Time{}, DataRate(UINT64_MAX)};
  for (int node = a; node != b;) {
    const int first = paths.first_hop(node, b);
    if (first < 0) break;
    const Graph::Port& port = net.graph.ports(node)[static_cast<size_t>(first)];
    const LinkConfig& link = net.cfg.topology.links[static_cast<size_t>(port.link)].config;
    c.one_way = c.one_way + link.delay;
    c.bottleneck = std::min(c.bottleneck, link.bandwidth);
    node = port.peer;
    if (node != b) c.one_way = c.one_way + net.cfg.switch_config.latency;
  }
  return c;
}

// The links a split cuts, as "a - b" (DIR/parallel.json).
json cut_names(const Network& net, const Partition& p) {
  json out = json::array();
  for (int l : p.cut_links)
    out.push_back(net.graph.name(net.graph.link(l).a) + " - " + net.graph.name(net.graph.link(l).b));
  return out;
}

json deadlocks_json(const std::vector<Network::PfcDeadlock>& found) {
  json out = json::array();
  for (const Network::PfcDeadlock& d : found) {
    json ports = json::array();
    for (const auto& [node, port] : d.ports) ports.push_back({{"node", node}, {"port", port}});
    out.push_back({{"at_ps", d.at.count()}, {"ports", std::move(ports)}});
  }
  return out;
}

// This rank's part of the results, with what the split cost it.
message::RankPart rank_part(const Network& net, ParallelRun& par, const json& mine,
                            const std::vector<std::string>& flows_csv,
                            const std::vector<std::string>& latency_csv) {
  const ParallelRun::Stats& st = par.stats();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return {mine.dump(),
          flows_csv,
          latency_csv,
          net.sim.events_run() - net.sim.experiment_events_run(),
          {st.windows, st.frames_sent, st.bytes_sent, st.notes_sent, st.credits_sent,
           std::count(par.partition().rank.begin(), par.partition().rank.end(), par.cluster().rank()),
           std::count_if(net.hosts.begin(), net.hosts.end(),
                         [&](const Host* h) { return par.owns(static_cast<int>(h->context()) - 1); }),
           net.sim.events_run(), st.run_s, st.wait_s, st.pack_s, ru.ru_maxrss}};
}

// parallel.json's figures of one rank.
json rank_stats_json(const message::RankPart::Stats& s) {
  return {{"windows", s.windows},
          {"frames_sent", s.frames_sent},
          {"bytes_sent", s.bytes_sent},
          {"notes_sent", s.notes_sent},
          {"credits_sent", s.credits_sent},
          {"nodes", s.nodes},
          {"hosts", s.hosts},
          {"events", s.events},
          {"run_s", s.run_s},
          {"wait_s", s.wait_s},
          {"pack_s", s.pack_s},
          {"max_rss_kib", s.max_rss_kib}};
}

// Switch counters added up over the ranks: `out` is rank 0's results,
// `ranks` the others' (an entry left out, null).
void add_up(json& out, const std::vector<json>& ranks, const char* list) {
  for (size_t p = 0; p < out[list].size(); ++p) {
    json& entry = out[list][p];
    for (auto& [key, value] : entry.items()) {
      if (key == "node" || key == "port") continue;
      if (key == "max_queue_bytes") {
        uint64_t m = value.get<uint64_t>();
        for (const json& r : ranks)
          if (!r[list][p].is_null()) m = std::max(m, r[list][p][key].get<uint64_t>());
        value = m;
      } else if (value.is_number_integer()) {
        int64_t sum = value.get<int64_t>();  // credit_wait_ps is signed
        for (const json& r : ranks)
          if (!r[list][p].is_null()) sum += r[list][p][key].get<int64_t>();
        if (value.is_number_unsigned())
          value = static_cast<uint64_t>(sum);
        else
          value = sum;
      }
    }
  }
}

// What rank 0 takes from another rank's results, the rest left out (null),
// so that what it gathers falls with the ranks: the hosts and workloads
// this rank ran.
void keep_for_merge(json& mine, const ParallelRun& par, const std::vector<int>& workload_rank,
                    std::vector<std::string>& flows_csv, std::vector<std::string>& latency_csv) {
  const int me = par.cluster().rank();
  for (size_t h = 0; h < mine["hosts"].size(); ++h)
    if (par.partition().rank[h] != me) mine["hosts"][h] = nullptr;
  for (size_t w = 0; w < workload_rank.size(); ++w) {
    if (workload_rank[w] == me) continue;
    mine["workloads"][w] = nullptr;
    flows_csv[w].clear();
    latency_csv[w].clear();
  }
}

// Into rank 0's results `out`, from the other ranks' `ranks` and `parts`:
// the workloads and hosts each ran, its switches' counters added up.
void take_what_ranks_ran(json& out, std::vector<json> ranks, std::vector<message::RankPart>& parts,
                         const Network& net, const ParallelRun& par, const std::vector<int>& workload_rank,
                         std::vector<std::string>& flows_csv, std::vector<std::string>& latency_csv) {
  for (size_t w = 0; w < workload_rank.size(); ++w) {
    const auto r = static_cast<size_t>(workload_rank[w]);
    if (r == 0) continue;
    out["workloads"][w] = std::move(ranks[r]["workloads"][w]);
    flows_csv[w] = std::move(parts[r].flows_csv.at(w));
    latency_csv[w] = std::move(parts[r].latency_csv.at(w));
  }
  for (size_t h = 0; h < net.hosts.size(); ++h)
    if (const auto r = static_cast<size_t>(par.partition().rank[h]); r != 0)
      out["hosts"][h] = std::move(ranks[r]["hosts"][h]);
  ranks.erase(ranks.begin());
  add_up(out, ranks, "switches");
}

// The results of a run split over ranks, on rank 0 (null on the others):
// each rank's results cover what its nodes did. Workloads and hosts come
// from the rank that ran them; switch counters are added up (the ports'
// are, before, by merged_port_counters: a frame lost on a cut link is
// counted where it would have arrived); events are every rank's own plus
// the experiment's, which all ran.
json merge_ranks(const ExperimentConfig& cfg, const Network& net, ParallelRun& par, json mine,
                 std::vector<std::string>& flows_csv, std::vector<std::string>& latency_csv,
                 const std::vector<int>& workload_rank, json* parallel_stats) {
  const bool root = par.cluster().rank() == 0;
  if (!root) keep_for_merge(mine, par, workload_rank, flows_csv, latency_csv);
  // Rank 0's own results and tables stay here (its part carries none).
  const std::vector<std::string> none;
  std::vector<std::string> all = par.cluster().gather(codec::encode(
      rank_part(net, par, root ? json() : mine, root ? none : flows_csv, root ? none : latency_csv)));
  if (!root) return nullptr;
  std::vector<message::RankPart> parts;
  std::vector<json> ranks;  // each rank's results; rank 0's is `out`
  for (std::string& a : all) {
    parts.push_back(codec::decode<message::RankPart>(a));
    std::string().swap(a);
    ranks.push_back(parts.size() == 1 ? json() : json::parse(parts.back().results));
    std::string().swap(parts.back().results);
  }
  std::string text = mine.dump();  // read back as the others' are: the same numbers' types
  mine = nullptr;
  json out = json::parse(text);
  std::string().swap(text);
  uint64_t events = net.sim.experiment_events_run(), in_use = 0, capture_bytes = 0;
  std::optional<int64_t> full_at;
  json stats = json::array();
  for (size_t i = 0; i < ranks.size(); ++i) {
    const json& r = i == 0 ? out : ranks[i];
    events += parts[i].own_events;
    in_use += r["packets_in_use"].get<uint64_t>();
    if (r.contains("capture")) {
      const json& c = r["capture"];
      capture_bytes += c["bytes"].get<uint64_t>();
      if (c.contains("full_at_ps"))
        full_at = std::min(full_at.value_or(INT64_MAX), c["full_at_ps"].get<int64_t>());
    }
    stats.push_back(rank_stats_json(parts[i].stats));
  }
  out["events"] = events;
  out["packets_in_use"] = in_use;
  if (out.contains("capture")) {
    out["capture"]["bytes"] = capture_bytes;
    out["capture"].erase("full_at_ps");
    if (full_at) out["capture"]["full_at_ps"] = *full_at;
  }
  take_what_ranks_ran(out, std::move(ranks), parts, net, par, workload_rank, flows_csv, latency_csv);
  // pfc_deadlocks: rank 0's, found among every rank's stuck ports at each check (parallel/split_checks.hpp).
  (void)cfg;
  if (parallel_stats)
    *parallel_stats = {{"ranks", par.cluster().size()},
                       {"partition", partition_name(par.partition().mode)},
                       {"lookahead_ps", par.lookahead() == Time::max() ? -1 : par.lookahead().count()},
                       {"cut_links", par.partition().cut_links.size()},
                       {"cut", cut_names(net, par.partition())},
                       {"per_rank", std::move(stats)}};
  return out;
}

}  // namespace

namespace {

// Whether `cfg` captures node `n`.
bool captured(const CaptureConfig& cfg, const Graph& graph, int n) {
  switch (cfg.mode) {
    case CaptureMode::hosts:
      return graph.is_host(n);
    case CaptureMode::all:
      return true;
    case CaptureMode::list:
      return std::find(cfg.nodes.begin(), cfg.nodes.end(), graph.name(n)) != cfg.nodes.end();
    case CaptureMode::none:
      break;
  }
  return false;
}

json end_json(const RunEnd& end) {
  json out = {{"reason", end.reason}};
  if (end.workloads_done != Time::max()) out["workloads_done_ps"] = end.workloads_done.count();
  if (!end.pausing.empty()) out["pfc_paused_ports"] = end.pausing;
  return out;
}

// A port's counters in results.json's order, as numbers a split run adds
// up across ranks (credit_wait_ps is signed: its two's complement adds
// the same). max_queue_bytes, at kMaxQueue, is taken as the maximum.
constexpr size_t kPortCounters = 10;
constexpr size_t kMaxQueue = 8;
constexpr std::array<const char*, kPortCounters> kPortCounterNames = {
    "tx_frames",  "rx_frames",    "tx_bytes",  "rx_bytes",        "drops",
    "link_drops", "pause_frames", "ecn_marks", "max_queue_bytes", "credit_wait_ps"};

std::array<uint64_t, kPortCounters> port_counters(const PortStats& st) {
  return {st.tx_frames,       st.rx_frames,
          st.tx_bytes,        st.rx_bytes,
          st.drops,           st.link_drops,
          st.pause_frames,    st.ecn_marks,
          st.max_queue_bytes, static_cast<uint64_t>(st.credit_wait.count())};
}

// A port's record as results.json lists it, from its counters.
json port_record(const std::string& node, size_t port, const uint64_t* c) {
  json r = {{"node", node}, {"port", port}};
  for (size_t k = 0; k < kPortCounters; ++k) r[kPortCounterNames[k]] = c[k];
  r["credit_wait_ps"] = static_cast<int64_t>(c[kPortCounters - 1]);  // signed
  return r;
}

// Each port's counters as a results.json record, made one at a time (a
// k = 64 fat tree has 393,216 ports, 420 MiB as JSON objects at once):
// from the network, or from `merged` (a split run's table, kPortCounters
// numbers a port in the network's order).
void each_port_record(const Network& net, const std::vector<uint64_t>* merged,
                      const std::function<void(const json&)>& each) {
  size_t i = 0;
  for (const auto& node : net.nodes)
    for (size_t p = 0; p < node->port_count(); ++p, i += kPortCounters) {
      if (merged) {
        each(port_record(node->name(), p, merged->data() + i));
      } else {
        const auto own = port_counters(node->port(p).stats());
        each(port_record(node->name(), p, own.data()));
      }
    }
}

// Every rank's port counters added up (the queue maxima taken), on every
// rank: a number a counter, where the same table as JSON gathered on rank 0
// was most of its memory at the end of a split k = 32 run.
std::vector<uint64_t> merged_port_counters(const Network& net, ParallelRun& par) {
  std::vector<uint64_t> sums;
  std::vector<int64_t> maxima;
  for (const auto& node : net.nodes)
    for (size_t p = 0; p < node->port_count(); ++p) {
      const auto c = port_counters(node->port(p).stats());
      sums.insert(sums.end(), c.begin(), c.end());
      maxima.push_back(static_cast<int64_t>(c[kMaxQueue]));
    }
  par.cluster().sum(sums);
  par.cluster().max(maxima);
  for (size_t i = 0; i < maxima.size(); ++i)
    sums[i * kPortCounters + kMaxQueue] = static_cast<uint64_t>(maxima[i]);
  return sums;
}

// The nodes that discard frames by their own decision (switches: no route,
// TTL expired), each with its counts by reason.
json switches_json(const Network& net) {
  json switches = json::array();
  for (const auto& node : net.nodes) {
    const auto discards = node->discards();
    if (discards.empty()) continue;
    json s = {{"node", node->name()}};
    for (const auto& [reason, n] : discards) s[std::string(reason)] = n;
    switches.push_back(std::move(s));
  }
  return switches;
}

json watchdog_json(const Network& net) {
  json watchdog = json::array();
  for (const Network::PfcWatchdogEvent& e : net.pfc_watchdog)
    watchdog.push_back(
        {{"at_ps", e.at.count()}, {"node", e.node}, {"port", e.port}, {"dropped_frames", e.dropped}});
  return watchdog;
}

// One host's entry of results.json's `hosts`.
json host_record(const Network& net, Host& h) {
  const auto stack = h.nic().fabric().stack_report();
  json record = {{"name", h.name()},
                 {"cpu_busy_ps", h.cpu_busy().count()},
                 {"cores", cores_json(h.cpu())},
                 {"interrupts", h.interrupts() + (stack ? stack->interrupts : 0)},
                 {"completion", std::string(to_string(net.cfg.host.completion))},
                 {"nic_frames_sent", h.nic().stats().frames_sent},
                 {"nic_frames_received", h.nic().stats().frames_received},
                 {"cnps_sent", h.nic().stats().cnps_sent},
                 {"cnps_received", h.nic().stats().cnps_received}};
  if (stack) {
    // The fabric's own host stack (the kernel's receive path, a poll-mode driver): where frames went.
    record["stack"] = stack->stack;
    json counters = json::object();
    for (const auto& [name, value] : stack->counters) counters[std::string(name)] = value;
    record[std::string(stack->section)] = std::move(counters);
  }
  return record;
}

json hosts_json(const Network& net) {
  json hosts = json::array();
  for (Host* h : net.hosts) hosts.push_back(host_record(net, *h));
  return hosts;
}

}  // namespace

Run::Run(const ExperimentConfig& cfg, std::filesystem::path dir, RunOptions options)
    : cfg_(cfg), dir_(std::move(dir)), options_(std::move(options)) {}

// Programs still waiting (a flow whose peer failed) go before the flows
// and hosts they point into, however the run ends; real programs
// (programs/) are killed and reaped after the engine's coroutines that
// serve them are gone.
Run::~Run() { release(); }

// Each host's record as compact text, no larger than it is (dump()'s
// string grows by doubling: 512 bytes for a 256-byte record).
void Run::keep_host_records() {
  host_text_.reserve(net_->hosts.size());
  for (Host* h : net_->hosts) {
    host_text_.push_back(host_record(*net_, *h).dump());
    host_text_.back().shrink_to_fit();
  }
}

RecordSource Run::host_records() const {
  return [this](const std::function<void(const json&)>& each) {
    for (const std::string& text : host_text_) each(json::parse(text));
  };
}

RecordSource Run::port_records() const {
  return [this](const std::function<void(const json&)>& each) {
    each_port_record(*net_, merged_ports_.empty() ? nullptr : &merged_ports_, each);
  };
}

json Run::execute() {
  build_network();
  attach_captures();
  attach_workloads();
  start();
  run();
  finish();
  json results = collect();
  if (results.is_null()) return results;
  write_outputs(results);
  if (!results.contains("hosts")) {
    // The table made only once the network is gone: at k = 64, as JSON
    // objects, it added 79 MiB to the run's peak (docs/performance.md).
    release();
    json hosts = json::array();
    for (std::string& text : host_text_) {
      hosts.push_back(json::parse(text));
      std::string().swap(text);
    }
    host_text_.clear();
    results["hosts"] = std::move(hosts);
  }
  return results;
}

// The steps' state, the engine's pending events first, then the members
// in the reverse of their order; what collect() made stays. The
// destructor's work, and execute()'s once the outputs are written.
void Run::release() {
  if (net_) net_->sim.clear();
  merged_ports_.clear();
  check_ = nullptr;
  deadlocks_.reset();
  series_.reset();
  extensions_.clear();
  pairs_.reset();
  spanning_.reset();
  runs_.clear();
  env_.reset();
  traces_.clear();
  captures_.reset();
  fabric_.reset();
  par_.reset();
  net_.reset();
}

// Takes a step on every rank at once when split: if it fails on one, it
// fails on all (ParallelRun::agree), so that none waits for the others.
template <typename Step>
void Run::together(Step&& step) {
  std::exception_ptr failed;
  try {
    step();
  } catch (...) {
    if (!par_) throw;
    failed = std::current_exception();
  }
  if (par_) par_->agree(failed);
}

void Run::build_network() {
  Cluster& cluster = Cluster::get();
  const bool parallel = options_.split && cluster.parallel();
  pricing_ = experiment_pricing(cfg_);
  net_ = std::make_unique<Network>(cfg_);
  // Split over ranks: before anything is scheduled (the fabric's finish
  // schedules), so that each rank keeps only its own nodes' events.
  fabric_ = std::make_unique<BuiltFabric>(rdmasim::build_network(*net_, fabric_of(cfg_), [&] {
    if (parallel)
      par_ = std::make_unique<ParallelRun>(
          cluster, *net_, partition_network(net_->graph, cfg_, cluster.size(), *options_.split));
  }));
  if (par_ && fabric_->seal_before_crossing) par_->seal_crossing(fabric_->sealer);
}

void Run::attach_captures() {
  // Captures: each rank those of its own nodes.
  together([&] {
    if (cfg_.capture.mode == CaptureMode::none) return;
    captures_ = std::make_unique<CaptureSet>(dir_, fabric_->linktype, fabric_->sealer, cfg_.capture.snaplen,
                                             cfg_.capture.max_bytes.count());
    for (int n = 0; n < net_->graph.size(); ++n)
      if (captured(cfg_.capture, net_->graph, n) && (!par_ || par_->owns(n)))
        captures_->capture(*net_->nodes[n]);
  });
  // CPU timelines.
  traces_.resize(cfg_.capture.cpu_trace ? net_->hosts.size() : 0);
  for (size_t i = 0; i < traces_.size(); ++i)
    net_->hosts[i]->cpu().trace_into(&traces_[i], cfg_.capture.cpu_trace_from, cfg_.capture.cpu_trace_to);
  // Faults.
  for (const FaultConfig& f : cfg_.faults) {
    Network::LinkEnds ends = net_->links.at(f.link);
    const bool up = f.up;
    net_->sim.at(f.at, [ends, up] { Port::set_link_up(*ends.a, up); });
  }
}

void Run::attach_workloads() {
  make_env();
  for (size_t i = 0; i < cfg_.workloads.size(); ++i)
    runs_.push_back(workload_of(cfg_.workloads[i])
                        .attach(*env_, cfg_.workloads[i], cfg_.seed ^ (i * 0x2545F4914F6CDD1Dull)));
  assign_ranks();
  if (par_) spanning_ = std::make_unique<SpanningFlows>(*par_);
  if (par_)
    pairs_ = std::make_unique<SpanningPairs>(*par_);  // after `spanning_`: it hands that one its notes
  // Features beside the workloads (apps/run_extensions.cpp: programs).
  extensions_ = make_run_extensions(RunContext{cfg_, *net_, *fabric_, *env_, dir_, par_ != nullptr});
}

// What a workload may ask of the network it runs on.
void Run::make_env() {
  Network& net = *net_;
  env_.reset(new WorkloadEnv{net.sim, cfg_, nullptr, fabric_->address, nullptr, fabric_->mtu, nullptr,
                             nullptr, 0, nullptr});
  env_->host = [&net](const std::string& name) -> Host* {
    auto n = net.graph.find(name);
    return n && net.graph.is_host(*n) ? net.hosts[*n] : nullptr;
  };
  // Connection management (RDMA CM's REQ, REP, RTU) crosses the path three
  // times before the QPs are ready; model it from the path's propagation delay.
  env_->connect_time = [&net](Host& a, Host& b) {
    const int d = net.paths().distance(net.host_index(a), net.host_index(b));
    return net.cfg.link.delay * 3 * std::max(d, 1);
  };
  env_->path = [&net](Host& a, Host& b) {
    return path_cost(net, net.paths(), net.host_index(a), net.host_index(b));
  };
  env_->link_rate = [&net](Host& h) {
    const auto ports = net.graph.ports(net.host_index(h));
    return ports.empty() ? DataRate{}
                         : net.cfg.topology.links[static_cast<size_t>(ports[0].link)].config.bandwidth;
  };
  const Fabric& fabric = fabric_of(cfg_);
  env_->frame_overhead = fabric.data_frame_headers(cfg_) + fabric.wire_overhead();
  env_->min_wire_frame = fabric.min_frame() + fabric.wire_overhead();
}

// The rank that runs each workload: its hosts' (the partition keeps them
// together), or, for one whose flows span ranks, every rank its part and
// rank 0 the whole (parallel/spanning_flows.hpp).
void Run::assign_ranks() {
  workload_rank_.assign(cfg_.workloads.size(), 0);
  runs_here_.assign(cfg_.workloads.size(), true);
  spans_.assign(cfg_.workloads.size(), false);
  for (size_t i = 0; i < cfg_.workloads.size() && par_; ++i) {
    spans_[i] = workload_spans_ranks(cfg_.workloads[i], cfg_);
    if (spans_[i]) continue;
    const auto n =
        cfg_.workloads[i].from.empty() ? std::nullopt : net_->graph.find(cfg_.workloads[i].from[0]);
    workload_rank_[i] = n ? par_->partition().rank[static_cast<size_t>(*n)] : 0;
    runs_here_[i] = workload_rank_[i] == par_->cluster().rank();
  }
}

void Run::start() {
  together([&] {
    for (size_t i = 0; i < runs_.size(); ++i) {
      runs_[i]->start();
      if (spans_[i] && runs_[i]->flows_run()) spanning_->add(i, *runs_[i]->flows_run());
      if (spans_[i] && !runs_[i]->flows_run()) pairs_->add(i, *runs_[i]);
    }
    for (const auto& x : extensions_) x->start();
  });
  if (cfg_.capture.timeseries)
    series_ = std::make_unique<TimeSeries>(*net_, runs_, *cfg_.capture.timeseries,
                                           cfg_.capture.max_bytes.count(), par_.get());
  // At each check: the ports found stuck go to the deadlock finder (rank
  // 0's, split), and a split run's captures keep to one budget.
  deadlocks_ = std::make_unique<PfcDeadlockFinder>(*net_);
  check_ = [this] { deadlocks_->add(std::exchange(net_->pfc_stuck, {})); };
  if (par_) check_ = SplitChecks(*par_, *net_, captures_.get(), cfg_.capture.max_bytes.count(), *deadlocks_);
}

// The time series is sampled on the way; check_ runs after every
// kCheckEvery (on every rank at once when split).
void Run::run() {
  Simulator& sim = net_->sim;
  const Time limit = cfg_.stop.value_or(Time::max());
  std::optional<ProgressLine> line;
  const bool flows = std::any_of(runs_.begin(), runs_.end(), [](const auto& r) { return r->flow_records(); });
  if (options_.progress.out)
    line.emplace(*options_.progress.out, cfg_.stop, flows, options_.progress.first_after);
  struct Finish {  // the line ends before the summary, however the run ends
    std::optional<ProgressLine>& l;
    ~Finish() {
      if (l) l->finish();
    }
  } finish{line};
  std::vector<uint64_t> seen;  // port_counts() when the workloads were done
  uint64_t pending = par_ ? par_->sum({sim.pending()})[0] : sim.pending();
  if (series_) series_->sample();  // at 0, before anything runs
  while (pending > 0 && sim.now() < limit) {
    const Time slice_end = limit - sim.now() > kCheckEvery ? sim.now() + kCheckEvery : limit;
    pending = run_through(slice_end, line);
    check_();
    if (pending == 0) break;
    if (end_.workloads_done == Time::max()) {
      if (!all_finished()) continue;
      end_.workloads_done = sim.now();
      seen = port_counts();
    } else if (sim.now() - end_.workloads_done >= kDrain) {
      return drained(seen);
    }
  }
  if (pending > 0) end_.reason = "stop";
}

// Runs through t, pausing before each time the series samples: after
// every event before it, before any at it (so a sample is no event, and
// a run's events are the same with a time series or without). Returns the
// events left to run (on every rank, when split).
uint64_t Run::run_through(Time t, std::optional<ProgressLine>& line) {
  for (;;) {
    const Time s = series_ ? series_->next() : Time::max();
    Time upto = s <= t ? s - Time::ps(1) : t;
    for (const auto& x : extensions_) upto = std::min(upto, x->before_advance(net_->sim.now(), upto));
    uint64_t left = 0;
    if (par_) {  // a split run shows no progress line (the ProgressOptions are rank 0's own)
      left = par_->run(upto);
    } else {
      advance(upto, line);
      left = net_->sim.pending();
    }
    if (s > t || left == 0) return left;
    series_->sample();
  }
}

// Runs the engine through `t` in one process. With a progress line, in
// steps of kProgressStep, updating the line between them when it is due:
// the same events, in the same order, and the checks still at every
// kCheckEvery.
void Run::advance(Time t, std::optional<ProgressLine>& line) {
  Simulator& sim = net_->sim;
  if (!line) return sim.run(t);
  constexpr Time kProgressStep = 1_us;
  while (sim.pending() > 0 && sim.now() < t) {
    sim.run(t - sim.now() > kProgressStep ? sim.now() + kProgressStep : t);
    if (!line->due()) continue;
    uint64_t frames = 0, done = 0;
    for (Host* h : net_->hosts) frames += h->nic().stats().frames_received;
    for (const auto& r : runs_)
      if (const auto* recs = r->flow_records())
        done += static_cast<uint64_t>(
            std::count_if(recs->begin(), recs->end(), [](const FlowRecord& f) { return f.completed; }));
    line->update(sim.now(), sim.events_run(), frames, done);
  }
}

// Every workload and extension has finished. A workload another rank runs
// is that rank's to call finished.
bool Run::all_finished() {
  bool done = true;
  for (size_t i = 0; i < runs_.size(); ++i) done = done && (!runs_here_[i] || runs_[i]->finished());
  for (const auto& x : extensions_) done = done && x->finished();
  return par_ ? par_->all(done) : done;
}

// Per port, frames sent and PAUSE frames; over all ranks when split (each
// counts what its nodes did).
std::vector<uint64_t> Run::port_counts() {
  std::vector<uint64_t> v;
  for (const auto& node : net_->nodes)
    for (size_t p = 0; p < node->port_count(); ++p) {
      v.push_back(node->port(p).stats().tx_frames);
      v.push_back(node->port(p).stats().pause_frames);
    }
  return par_ ? par_->sum(std::move(v)) : v;
}

// kDrain after the workloads were done (port_counts() then: `seen`): the
// run ends, stalled if frames still flowed meanwhile, naming the ports
// that paused (a PFC deadlock's), else done.
void Run::drained(const std::vector<uint64_t>& seen) {
  const std::vector<uint64_t> now = port_counts();
  bool flowing = false;
  size_t i = 0;
  for (const auto& node : net_->nodes)
    for (size_t p = 0; p < node->port_count(); ++p, i += 2) {
      flowing = flowing || now[i] > seen[i];
      if (now[i + 1] > seen[i + 1]) end_.pausing.push_back(node->name() + "-" + std::to_string(p));
    }
  end_.reason = flowing ? "stalled" : "done";
}

void Run::finish() {
  for (const auto& x : extensions_) x->after_run(end_.reason);
  together([&] {
    if (series_) series_->write(dir_);
    if (captures_) captures_->close();
    if (!traces_.empty()) {
      for (Host* h : net_->hosts) h->cpu().end_trace();
      write_cpu_traces(*net_, traces_, dir_, par_.get());
    }
  });
}

json Run::collect() {
  json out;
  out["experiment"] = cfg_.name;
  out["fabric"] = cfg_.fabric;
  out["seed"] = cfg_.seed;
  out["end_time_ps"] = net_->sim.now().count();
  out["events"] = net_->sim.events_run();
  out["packets_in_use"] = net_->pool.in_use();
  add_budgets(out);
  out["end"] = end_json(end_);
  out["workloads"] = workloads_json();
  for (const auto& x : extensions_) x->results(out);
  // The ports are written from the network (port_records) and never held
  // as JSON; a split run first adds them up across ranks.
  if (par_) merged_ports_ = merged_port_counters(*net_, *par_);
  out["switches"] = switches_json(*net_);
  out["pfc_deadlocks"] = deadlocks_json(deadlocks_->found());
  out["pfc_watchdog"] = watchdog_json(*net_);
  if (!par_) {
    keep_host_records();  // results.json's `hosts` is written from them
  } else {
    out["hosts"] = hosts_json(*net_);  // the ranks' are merged
    parallel_stats_ = std::make_unique<json>();
    out = merge_ranks(cfg_, *net_, *par_, std::move(out), flows_csv_, latency_csv_, workload_rank_,
                      parallel_stats_.get());
    if (out.is_null()) return out;  // not rank 0
  }
  const RecordSource hosts = out.contains("hosts") ? records_of(out["hosts"]) : host_records();
  uint64_t cpu_busy_ps = 0;
  hosts([&](const json& h) { cpu_busy_ps += h["cpu_busy_ps"].get<uint64_t>(); });
  out["drops"] = drops_json(out, port_records(), hosts);
  out["cost"] =
      experiment_cost(*pricing_, cpu_busy_ps, static_cast<uint64_t>(net_->sim.now().count()), work_done(out));
  return out;
}

// results.json's `capture` and `timeseries`: the bytes written against capture.max_bytes.
void Run::add_budgets(json& out) const {
  if (captures_) {
    json c = {{"bytes", captures_->bytes()}, {"max_bytes", cfg_.capture.max_bytes.count()}};
    if (captures_->full_at()) c["full_at_ps"] = captures_->full_at()->count();
    out["capture"] = std::move(c);
  }
  if (series_) {
    json t = {{"bytes", series_->bytes()}, {"max_bytes", cfg_.capture.max_bytes.count()}};
    if (series_->full_at()) t["full_at_ps"] = series_->full_at()->count();
    out["timeseries"] = std::move(t);
  }
}

// results.json's `workloads`, each kind writing its own entry, with the
// rows of latency.csv and flows.csv.
json Run::workloads_json() {
  json wl = json::array();
  for (size_t i = 0; i < runs_.size(); ++i) {
    const auto& r = runs_[i];
    const WorkloadConfig& w = r->config();
    flows_csv_.emplace_back();
    latency_csv_.emplace_back();
    std::vector<FlowRecord> span_records;
    FlowStats s = spanning_ && spanning_->has(i) ? spanning_->result(i, span_records)
                  : pairs_ && pairs_->has(i)     ? pairs_->result(i)
                                                 : r->result();
    if (!s.finished) s.end = net_->sim.now();  // cut off by stop: active until then
    json j;
    j["name"] = w.name;
    j["kind"] = w.kind_name;
    const Workload& kind = workload_of(w);
    kind.results(cfg_, w, s, j);
    r->add_results(j);
    if (cfg_.capture.latency_samples && kind.latency_samples())
      latency_csv_.back() = latency_csv_rows(w.name, s.latency_ps);
    if (const auto* flows = spanning_ && spanning_->has(i) ? &span_records : r->flow_records()) {
      j["fct"] = fct_json(*flows);
      flows_csv_.back() = flows_csv_rows(w.name, w.from, *flows);
    }
    wl.push_back(std::move(j));
  }
  return wl;
}

void Run::write_outputs(const json& results) {
  // Each workload's rows in turn: joining them first made two more copies
  // of a k = 64 run's 4.7 MiB of flows.csv at the end of the run.
  auto rows = [](std::string_view header, const std::vector<std::string>& by_workload) {
    return [header, &by_workload](std::ostream& out) {
      out << header;
      for (const std::string& r : by_workload) out << r;
    };
  };
  if (cfg_.capture.latency_samples)
    write_file_atomic(dir_ / "latency.csv", rows("workload,sample,latency_ns\n", latency_csv_));
  if (std::any_of(runs_.begin(), runs_.end(), [](const auto& r) { return r->flow_records() != nullptr; }))
    write_file_atomic(dir_ / "flows.csv", rows(kFlowsCsvHeader, flows_csv_));
  // Files a kind writes of its own (kind: nvme: fio.json, nvme.csv).
  for (const Workload* kind : workload_kinds()) {
    std::vector<const WorkloadRun*> mine;
    for (const auto& r : runs_)
      if (&workload_of(r->config()) == kind) mine.push_back(r.get());
    if (mine.empty()) continue;
    for (const auto& [name, text] : kind->outputs(cfg_, results["workloads"], mine, net_->sim.now()))
      write_file_atomic(dir_ / name, text);
  }
  if (parallel_stats_ && !parallel_stats_->is_null())
    write_file_atomic(dir_ / "parallel.json", parallel_stats_->dump(2) + "\n");
  // Streamed, as dump(2) gives it: the port table alone is 49,152 records at k = 32.
  std::vector<StreamedTable> streamed{{"ports", port_records()}};
  if (!results.contains("hosts")) streamed.push_back({"hosts", host_records()});
  write_file_atomic(dir_ / "results.json", [&](std::ostream& out) {
    write_json_with_records(out, results, streamed);
    out << "\n";
  });
  for (const char* table : {"workloads", "ports", "hosts"}) {  // CSV beside it, same names
    const auto held = std::find_if(streamed.begin(), streamed.end(),
                                   [&](const StreamedTable& t) { return t.key == table; });
    write_file_atomic(dir_ / (std::string(table) + ".csv"), [&](std::ostream& out) {
      write_records_csv(out, held != streamed.end() ? held->records : records_of(results[table]));
    });
  }
  if (results.contains("cost")) write_file_atomic(dir_ / "bom.csv", records_csv(results["cost"]["bom"]));
}

}  // namespace rdmasim
