#include "apps/runner.hpp"

#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "apps/output_dir.hpp"
#include "apps/progress.hpp"
#include "apps/report.hpp"
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
#include "programs/programs_run.hpp"
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

// How a run ended (results.json "end").
struct RunEnd {
  // idle: nothing left to do; stop: the `stop` time; done: the workloads had
  // finished and only timers were left; stalled: ... and frames still flowed.
  const char* reason = "idle";
  Time workloads_done = Time::max();  // when every workload had finished, if it came to that
  std::vector<std::string> pausing;   // stalled: ports that sent or received PFC PAUSE frames meanwhile
};

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

// `series` is sampled on the way; `check` runs after every kCheckEvery
// (on every rank at once when split).
RunEnd run_until_done(Network& net, const std::vector<std::unique_ptr<WorkloadRun>>& runs,
                      std::optional<Time> stop, const ProgressOptions& progress, ParallelRun* par,
                      const std::vector<bool>& runs_here, TimeSeries* series,
                      const std::function<void()>& check,
                      const std::vector<std::unique_ptr<RunExtension>>& extensions,
                      const std::function<bool()>& programs_done) {
  Simulator& sim = net.sim;
  const Time limit = stop.value_or(Time::max());
  // With a progress line, each slice runs in steps of kProgressStep,
  // updating the line between them when it is due: the same events, in the
  // same order, and the checks below still at every kCheckEvery.
  std::optional<ProgressLine> line;
  const bool flows = std::any_of(runs.begin(), runs.end(), [](const auto& r) { return r->flow_records(); });
  if (progress.out) line.emplace(*progress.out, stop, flows, progress.first_after);
  auto run_to = [&](Time t) {
    if (!line) return sim.run(t);
    constexpr Time kProgressStep = 1_us;
    while (sim.pending() > 0 && sim.now() < t) {
      sim.run(t - sim.now() > kProgressStep ? sim.now() + kProgressStep : t);
      if (!line->due()) continue;
      uint64_t frames = 0, done = 0;
      for (Host* h : net.hosts) frames += h->nic().stats().frames_received;
      for (const auto& r : runs)
        if (const auto* recs = r->flow_records())
          done += static_cast<uint64_t>(
              std::count_if(recs->begin(), recs->end(), [](const FlowRecord& f) { return f.completed; }));
      line->update(sim.now(), sim.events_run(), frames, done);
    }
  };
  struct Finish {  // the line ends before the summary, however the run ends
    std::optional<ProgressLine>& l;
    ~Finish() {
      if (l) l->finish();
    }
  } finish{line};
  // Runs through t, pausing before each time the series samples: after
  // every event before it, before any at it (so a sample is no event, and
  // a run's events are the same with a time series or without).
  auto run_through = [&](Time t) -> uint64_t {
    for (;;) {
      const Time s = series ? series->next() : Time::max();
      Time upto = s <= t ? s - Time::ps(1) : t;
      for (const auto& x : extensions) upto = std::min(upto, x->before_advance(sim.now(), upto));
      uint64_t left = 0;
      if (par) {  // a split run shows no progress line (the ProgressOptions are rank 0's own)
        left = par->run(upto);
      } else {
        run_to(upto);
        left = sim.pending();
      }
      if (s > t || left == 0) return left;
      series->sample();
    }
  };
  RunEnd end;
  // Per port, frames sent and PAUSE frames; over all ranks when split (each
  // counts what its nodes did).
  auto port_counts = [&] {
    std::vector<uint64_t> v;
    for (const auto& node : net.nodes)
      for (size_t p = 0; p < node->port_count(); ++p) {
        v.push_back(node->port(p).stats().tx_frames);
        v.push_back(node->port(p).stats().pause_frames);
      }
    return par ? par->sum(std::move(v)) : v;
  };
  std::vector<uint64_t> seen;  // port_counts() when the workloads were done
  uint64_t pending = par ? par->sum({sim.pending()})[0] : sim.pending();
  if (series) series->sample();  // at 0, before anything runs
  while (pending > 0 && sim.now() < limit) {
    const Time slice_end = limit - sim.now() > kCheckEvery ? sim.now() + kCheckEvery : limit;
    pending = run_through(slice_end);
    check();
    if (pending == 0) break;
    if (end.workloads_done == Time::max()) {
      // A workload another rank runs is that rank's to call finished.
      bool done = true;
      for (size_t i = 0; i < runs.size(); ++i) done = done && (!runs_here[i] || runs[i]->finished());
      for (const auto& x : extensions) done = done && x->finished();
      done = done && programs_done();
      if (par) done = par->all(done);
      if (!done) continue;
      end.workloads_done = sim.now();
      seen = port_counts();
    } else if (sim.now() - end.workloads_done >= kDrain) {
      const std::vector<uint64_t> now = port_counts();
      bool flowing = false;
      size_t i = 0;
      for (const auto& node : net.nodes)
        for (size_t p = 0; p < node->port_count(); ++p, i += 2) {
          flowing = flowing || now[i] > seen[i];
          if (now[i + 1] > seen[i + 1]) end.pausing.push_back(node->name() + "-" + std::to_string(p));
        }
      end.reason = flowing ? "stalled" : "done";
      return end;
    }
  }
  if (pending > 0) end.reason = "stop";
  return end;
}

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

// The results of a run split over ranks, on rank 0 (null on the others):
// each rank's results cover what its nodes did. Workloads and hosts come
// from the rank that ran them; port counters are added up (a frame lost on
// a cut link is counted where it would have arrived), the queue maxima
// taken; events are every rank's own plus the experiment's, which all ran.
json merge_ranks(const ExperimentConfig& cfg, const Network& net, ParallelRun& par, json mine,
                 std::vector<std::string>& flows_csv, std::vector<std::string>& latency_csv,
                 const std::vector<int>& workload_rank, json* parallel_stats) {
  const ParallelRun::Stats& st = par.stats();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const message::RankPart part{
      mine.dump(),
      flows_csv,
      latency_csv,
      net.sim.events_run() - net.sim.experiment_events_run(),
      {st.windows, st.frames_sent, st.bytes_sent, st.notes_sent, st.credits_sent,
       std::count(par.partition().rank.begin(), par.partition().rank.end(), par.cluster().rank()),
       std::count_if(net.hosts.begin(), net.hosts.end(),
                     [&](const Host* h) { return par.owns(static_cast<int>(h->context()) - 1); }),
       net.sim.events_run(), st.run_s, st.wait_s, st.pack_s, ru.ru_maxrss}};
  const std::vector<std::string> all = par.cluster().gather(codec::encode(part));
  if (par.cluster().rank() != 0) return nullptr;
  std::vector<message::RankPart> parts;
  std::vector<json> ranks;  // each rank's results
  for (const std::string& a : all) {
    parts.push_back(codec::decode<message::RankPart>(a));
    ranks.push_back(json::parse(parts.back().results));
  }
  json out = ranks[0];
  uint64_t events = net.sim.experiment_events_run(), in_use = 0, capture_bytes = 0;
  std::optional<int64_t> full_at;
  json stats = json::array();
  for (size_t i = 0; i < ranks.size(); ++i) {
    const json& r = ranks[i];
    const message::RankPart::Stats& s = parts[i].stats;
    events += parts[i].own_events;
    in_use += r["packets_in_use"].get<uint64_t>();
    if (r.contains("capture")) {
      const json& c = r["capture"];
      capture_bytes += c["bytes"].get<uint64_t>();
      if (c.contains("full_at_ps"))
        full_at = std::min(full_at.value_or(INT64_MAX), c["full_at_ps"].get<int64_t>());
    }
    stats.push_back({{"windows", s.windows},
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
                     {"max_rss_kib", s.max_rss_kib}});
  }
  out["events"] = events;
  out["packets_in_use"] = in_use;
  if (out.contains("capture")) {
    out["capture"]["bytes"] = capture_bytes;
    out["capture"].erase("full_at_ps");
    if (full_at) out["capture"]["full_at_ps"] = *full_at;
  }
  for (size_t w = 0; w < workload_rank.size(); ++w) {
    const auto r = static_cast<size_t>(workload_rank[w]);
    out["workloads"][w] = ranks[r]["workloads"][w];
    flows_csv[w] = parts[r].flows_csv.at(w);
    latency_csv[w] = parts[r].latency_csv.at(w);
  }
  for (size_t h = 0; h < net.hosts.size(); ++h)
    out["hosts"][h] = ranks[static_cast<size_t>(par.partition().rank[h])]["hosts"][h];
  for (size_t p = 0; p < out["ports"].size(); ++p) {
    json& port = out["ports"][p];
    for (auto& [key, value] : port.items()) {
      if (key == "node" || key == "port") continue;
      if (key == "max_queue_bytes") {
        uint64_t m = 0;
        for (const json& r : ranks) m = std::max(m, r["ports"][p][key].get<uint64_t>());
        value = m;
      } else if (value.is_number_integer()) {
        int64_t sum = 0;  // credit_wait_ps is signed
        for (const json& r : ranks) sum += r["ports"][p][key].get<int64_t>();
        if (value.is_number_unsigned())
          value = static_cast<uint64_t>(sum);
        else
          value = sum;
      }
    }
  }
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

json run_experiment(const ExperimentConfig& cfg, const std::filesystem::path& dir,
                    const ProgressOptions& progress, std::optional<PartitionMode> split,
                    json* parallel_stats) {
  Cluster& cluster = Cluster::get();
  const bool parallel = split && cluster.parallel();
  Network net(cfg);
  // Split over ranks: before anything is scheduled (the fabric's finish
  // schedules), so that each rank keeps only its own nodes' events.
  std::unique_ptr<ParallelRun> par;
  const BuiltFabric fabric = build_network(net, fabric_of(cfg), [&] {
    if (parallel)
      par = std::make_unique<ParallelRun>(cluster, net,
                                          partition_network(net.graph, cfg, cluster.size(), *split));
  });
  if (par && fabric.seal_before_crossing) par->seal_crossing(fabric.sealer);
  auto mine = [&par](int node) { return !par || par->owns(node); };

  // Captures: each rank those of its own nodes.
  std::unique_ptr<CaptureSet> captures;
  std::exception_ptr failed;
  try {
    if (cfg.capture.mode != CaptureMode::none) {
      captures = std::make_unique<CaptureSet>(dir, fabric.linktype, fabric.sealer, cfg.capture.snaplen,
                                              cfg.capture.max_bytes.count());
      for (int n = 0; n < net.graph.size(); ++n) {
        bool on = false;
        switch (cfg.capture.mode) {
          case CaptureMode::hosts:
            on = net.graph.is_host(n);
            break;
          case CaptureMode::all:
            on = true;
            break;
          case CaptureMode::list:
            on = std::find(cfg.capture.nodes.begin(), cfg.capture.nodes.end(), net.graph.name(n)) !=
                 cfg.capture.nodes.end();
            break;
          case CaptureMode::none:
            break;
        }
        if (on && mine(n)) captures->capture(*net.nodes[n]);
      }
    }
  } catch (...) {
    if (!par) throw;
    failed = std::current_exception();
  }
  if (par) par->agree(failed);

  // CPU timelines.
  std::vector<std::vector<CpuSegment>> traces(cfg.capture.cpu_trace ? net.hosts.size() : 0);
  for (size_t i = 0; i < traces.size(); ++i)
    net.hosts[i]->cpu().trace_into(&traces[i], cfg.capture.cpu_trace_from, cfg.capture.cpu_trace_to);

  // Faults.
  for (const FaultConfig& f : cfg.faults) {
    Network::LinkEnds ends = net.links.at(f.link);
    const bool up = f.up;
    net.sim.at(f.at, [ends, up] { Port::set_link_up(*ends.a, up); });
  }

  // Workloads.
  WorkloadEnv env{net.sim, cfg, nullptr, fabric.address, nullptr, fabric.mtu, nullptr, nullptr, 0, nullptr};
  env.host = [&net](const std::string& name) -> Host* {
    auto n = net.graph.find(name);
    return n && net.graph.is_host(*n) ? net.hosts[*n] : nullptr;
  };
  // Connection management (RDMA CM's REQ, REP, RTU) crosses the path three
  // times before the QPs are ready; model it from the path's propagation delay.
  const HostPaths hops(net.graph);
  env.connect_time = [&net, &hops](Host& a, Host& b) {
    const int d = hops.distance(net.host_index(a), net.host_index(b));
    return net.cfg.link.delay * 3 * std::max(d, 1);
  };
  env.path = [&net, &hops](Host& a, Host& b) {
    return path_cost(net, hops, net.host_index(a), net.host_index(b));
  };
  env.link_rate = [&net](Host& h) {
    const auto ports = net.graph.ports(net.host_index(h));
    return ports.empty() ? DataRate{}
                         : net.cfg.topology.links[static_cast<size_t>(ports[0].link)].config.bandwidth;
  };
  env.frame_overhead = fabric_of(cfg).data_frame_headers(cfg) + fabric_of(cfg).wire_overhead();
  std::vector<std::unique_ptr<WorkloadRun>> runs;
  for (size_t i = 0; i < cfg.workloads.size(); ++i)
    runs.push_back(
        workload_of(cfg.workloads[i]).attach(env, cfg.workloads[i], cfg.seed ^ (i * 0x2545F4914F6CDD1Dull)));
  // The rank that runs each workload: its hosts' (the partition keeps them
  // together), or, for one whose flows span ranks, every rank its part and
  // rank 0 the whole (parallel/spanning_flows.hpp).
  std::vector<int> workload_rank(cfg.workloads.size(), 0);
  std::vector<bool> runs_here(cfg.workloads.size(), true);
  std::vector<bool> spans(cfg.workloads.size(), false);
  for (size_t i = 0; i < cfg.workloads.size() && par; ++i) {
    spans[i] = workload_spans_ranks(cfg.workloads[i], cfg);
    if (spans[i]) continue;
    const auto n = cfg.workloads[i].from.empty() ? std::nullopt : net.graph.find(cfg.workloads[i].from[0]);
    workload_rank[i] = n ? par->partition().rank[static_cast<size_t>(*n)] : 0;
    runs_here[i] = workload_rank[i] == cluster.rank();
  }
  std::unique_ptr<SpanningFlows> spanning;
  if (par) spanning = std::make_unique<SpanningFlows>(*par);
  std::unique_ptr<SpanningPairs> pairs;  // after `spanning`: it hands that one its notes
  if (par) pairs = std::make_unique<SpanningPairs>(*par);
  // Real programs (programs/): killed and reaped however the run ends, after
  // the engine's coroutines that serve them are gone (clear_on_exit).
  std::unique_ptr<ProgramsRun> programs;
  if (!cfg.programs.empty()) {
    if (par) throw InputError("programs: a run with programs cannot be split over ranks (docs/programs.md)");
    programs = std::make_unique<ProgramsRun>(net, fabric, dir);
  }
  // Programs still waiting (a flow whose peer failed) go before the flows
  // and hosts they point into, however the run ends.
  struct ClearOnExit {
    Simulator& sim;
    ~ClearOnExit() { sim.clear(); }
  } clear_on_exit{net.sim};
  try {
    for (size_t i = 0; i < runs.size(); ++i) {
      runs[i]->start();
      if (spans[i] && runs[i]->flows_run()) spanning->add(i, *runs[i]->flows_run());
      if (spans[i] && !runs[i]->flows_run()) pairs->add(i, *runs[i]);
    }
    if (programs) programs->start();
  } catch (...) {
    if (!par) throw;
    failed = std::current_exception();
  }
  if (par) par->agree(failed);
  std::unique_ptr<TimeSeries> series;
  if (cfg.capture.timeseries)
    series = std::make_unique<TimeSeries>(net, runs, *cfg.capture.timeseries, cfg.capture.max_bytes.count(),
                                          par.get());
  // At each check: the ports found stuck go to the deadlock finder (rank
  // 0's, split), and a split run's captures keep to one budget.
  PfcDeadlockFinder deadlocks(net);
  std::function<void()> check = [&] { deadlocks.add(std::exchange(net.pfc_stuck, {})); };
  if (par) check = SplitChecks(*par, net, captures.get(), cfg.capture.max_bytes.count(), deadlocks);

  const std::vector<std::unique_ptr<RunExtension>> extensions = make_run_extensions(cfg, env);
  for (const auto& x : extensions) x->start();
  const RunEnd end = run_until_done(net, runs, cfg.stop, progress, par.get(), runs_here, series.get(), check,
                                    extensions, [&] { return !programs || programs->finished(); });
  for (const auto& x : extensions) x->after_run();
  if (programs)
    programs->end(std::string(end.reason) == "stop" ? "the experiment's stop time came"
                                                    : "the simulation had nothing left to do");
  try {
    if (series) series->write(dir);
    if (captures) captures->close();
    if (!traces.empty()) {
      for (Host* h : net.hosts) h->cpu().end_trace();
      write_cpu_traces(net, traces, dir, par.get());
    }
  } catch (...) {
    if (!par) throw;
    failed = std::current_exception();
  }
  if (par) par->agree(failed);

  // results.json
  json out;
  out["experiment"] = cfg.name;
  out["fabric"] = cfg.fabric;
  out["seed"] = cfg.seed;
  out["end_time_ps"] = net.sim.now().count();
  out["events"] = net.sim.events_run();
  out["packets_in_use"] = net.pool.in_use();
  if (captures) {
    json c = {{"bytes", captures->bytes()}, {"max_bytes", cfg.capture.max_bytes.count()}};
    if (captures->full_at()) c["full_at_ps"] = captures->full_at()->count();
    out["capture"] = std::move(c);
  }
  if (series) {
    json t = {{"bytes", series->bytes()}, {"max_bytes", cfg.capture.max_bytes.count()}};
    if (series->full_at()) t["full_at_ps"] = series->full_at()->count();
    out["timeseries"] = std::move(t);
  }
  json end_json = {{"reason", end.reason}};
  if (end.workloads_done != Time::max()) end_json["workloads_done_ps"] = end.workloads_done.count();
  if (!end.pausing.empty()) end_json["pfc_paused_ports"] = end.pausing;
  out["end"] = std::move(end_json);
  json wl = json::array();
  std::vector<std::string> flows_csv, latency_csv;  // by workload
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    const WorkloadConfig& w = r->config();
    flows_csv.emplace_back();
    latency_csv.emplace_back();
    std::vector<FlowRecord> span_records;
    FlowStats s = spanning && spanning->has(i) ? spanning->result(i, span_records)
                  : pairs && pairs->has(i)     ? pairs->result(i)
                                               : r->result();
    if (!s.finished) s.end = net.sim.now();  // cut off by stop: active until then
    json j;
    j["name"] = w.name;
    j["kind"] = w.kind_name;
    const Workload& kind = workload_of(w);
    kind.results(cfg, w, s, j);
    r->add_results(j);
    if (cfg.capture.latency_samples && kind.latency_samples())
      latency_csv.back() = latency_csv_rows(w.name, s.latency_ps);
    if (const auto* flows = spanning && spanning->has(i) ? &span_records : r->flow_records()) {
      j["fct"] = fct_json(*flows);
      flows_csv.back() = flows_csv_rows(w.name, w.from, *flows);
    }
    wl.push_back(std::move(j));
  }
  out["workloads"] = std::move(wl);
  for (const auto& x : extensions) x->results(out);
  if (programs) out["programs"] = programs->results();
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
                       {"link_drops", st.link_drops},
                       {"pause_frames", st.pause_frames},
                       {"ecn_marks", st.ecn_marks},
                       {"max_queue_bytes", st.max_queue_bytes},
                       {"credit_wait_ps", st.credit_wait.count()}});
    }
  }
  out["ports"] = std::move(ports);
  out["pfc_deadlocks"] = deadlocks_json(deadlocks.found());
  json watchdog = json::array();
  for (const Network::PfcWatchdogEvent& e : net.pfc_watchdog)
    watchdog.push_back(
        {{"at_ps", e.at.count()}, {"node", e.node}, {"port", e.port}, {"dropped_frames", e.dropped}});
  out["pfc_watchdog"] = std::move(watchdog);
  json hosts = json::array();
  uint64_t cpu_busy_ps = 0;
  for (Host* h : net.hosts) {
    cpu_busy_ps += static_cast<uint64_t>(h->cpu_busy().count());
    const auto stack = h->nic().fabric().stack_report();
    hosts.push_back({{"name", h->name()},
                     {"cpu_busy_ps", h->cpu_busy().count()},
                     {"cores", cores_json(h->cpu())},
                     {"interrupts", h->interrupts() + (stack ? stack->interrupts : 0)},
                     {"completion", std::string(to_string(cfg.host.completion))},
                     {"nic_frames_sent", h->nic().stats().frames_sent},
                     {"nic_frames_received", h->nic().stats().frames_received},
                     {"cnps_sent", h->nic().stats().cnps_sent},
                     {"cnps_received", h->nic().stats().cnps_received}});
    if (stack) {
      // The fabric's own host stack (the kernel's receive path, a poll-mode driver): where frames went.
      hosts.back()["stack"] = stack->stack;
      json counters = json::object();
      for (const auto& [name, value] : stack->counters) counters[std::string(name)] = value;
      hosts.back()[std::string(stack->section)] = std::move(counters);
    }
  }
  out["hosts"] = std::move(hosts);
  if (par) {
    out = merge_ranks(cfg, net, *par, std::move(out), flows_csv, latency_csv, workload_rank, parallel_stats);
    if (out.is_null()) return out;  // not rank 0
    cpu_busy_ps = 0;
    for (const json& h : out["hosts"]) cpu_busy_ps += h["cpu_busy_ps"].get<uint64_t>();
  }
  out["drops"] = drops_json(out);
  out["cost"] =
      experiment_cost(cfg, cpu_busy_ps, static_cast<uint64_t>(net.sim.now().count()), work_done(out));
  std::string latency, flows;
  for (size_t i = 0; i < runs.size(); ++i) {
    latency += latency_csv[i];
    flows += flows_csv[i];
  }
  if (cfg.capture.latency_samples)
    write_file_atomic(dir / "latency.csv", "workload,sample,latency_ns\n" + latency);
  if (std::any_of(runs.begin(), runs.end(), [](const auto& r) { return r->flow_records() != nullptr; }))
    write_file_atomic(dir / "flows.csv", std::string(kFlowsCsvHeader) + flows);
  // Files a kind writes of its own (kind: nvme: fio.json, nvme.csv).
  for (const Workload* kind : workload_kinds()) {
    std::vector<const WorkloadRun*> mine;
    for (const auto& r : runs)
      if (&workload_of(r->config()) == kind) mine.push_back(r.get());
    if (mine.empty()) continue;
    for (const auto& [name, text] : kind->outputs(cfg, out["workloads"], mine, net.sim.now()))
      write_file_atomic(dir / name, text);
  }
  return out;
}

}  // namespace rdmasim
