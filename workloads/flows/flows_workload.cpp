// kind: flows: flows between random pairs of hosts, sizes drawn from a
// CDF, Poisson arrivals (workloads/flows.hpp, workloads/flows_run.hpp).
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "fabrics/registry.hpp"
#include "workloads/flow_cdf.hpp"
#include "workloads/flows_run.hpp"
#include "workloads/verbs/verbs_reader.hpp"
#include "workloads/workload_kind.hpp"
#include "workloads/workload_memory.hpp"
#include "workloads/workload_reader.hpp"
#include "workloads/workload_results.hpp"

namespace rdmasim {

namespace {

// Its keys; hosts, cdf (a file beside the experiment), op and payload are read by `read`.
const KeyTable<WorkloadConfig>& flows_keys() {
  using namespace keys;
  using W = WorkloadConfig;
  static const KeyTable<W> t{
      "workloads.flows", "a workload",
      with_verbs_knobs({
          declared<W>("hosts", "list of host names", "all hosts", "the hosts flows go between"),
          declared<W>("cdf", "`websearch`, `hadoop`, or a file", "websearch", "flow sizes (below)"),
          key_at<W>(
              "load", [](W& w) -> double& { return w.flows.load; },
              refusing<double>(
                  probability(), "(0, 1]", [](const double& p) { return p <= 0; },
                  [](const Entry& e) {
                    return "expected a load above 0 and at most 1, got " + describe(e.value);
                  }),
              "0.3", "share of each sender's link its flows offer on average"),
          required(key_at<W>(
                       "duration", [](W& w) -> Time& { return w.flows.duration; }, positive_time(), "",
                       "flows arrive during [`start`, `start` + `duration`)"),
                   "how long flows arrive, such as 1ms"),
          declared<W>("op", "`rdma_write` or `send`", "rdma_write", "the operation each flow is"),
          key("qp", &W::qp, choice<QpType>("QP type"), "rc", "the flows' QP type (below)"),
          key("start", &W::start, time(), "0", "when arrivals begin"),
          declared<W>("payload", "`pattern` or `memory`", "pattern", "where the flows' bytes live (below)"),
      })};
  return t;
}

// kind: flows: the size CDF (built in, or a file beside the experiment).
void flow_cdf(ExperimentDraft& d, const Fields& f, WorkloadConfig& w) {
  FlowsConfig& fl = w.flows;
  const Entry* ce = f.find("cdf");
  if (ce)
    if (auto s = d.c.scalar(ce->value, ce->path, "websearch, hadoop or a CDF file")) fl.cdf = *s;
  std::string text, error;
  if (auto b = builtin_cdf(fl.cdf)) {
    text = std::string(*b);
  } else if (ce) {
    // A file of `size_bytes cumulative_percent` lines, relative to the experiment file.
    // Only a regular file: a directory cannot be read, and a FIFO or a
    // device (/dev/zero) would block or never end.
    const std::filesystem::path file = d.x.file.parent_path() / fl.cdf;
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(file, ec);
    std::ifstream in;
    std::string why;
    if (fs::is_directory(st))
      why = ": it is a directory";
    else if (fs::exists(st) && !fs::is_regular_file(st))
      why = ": it is not a regular file (a FIFO or a device)";
    else if (fs::exists(st) && fs::file_size(file, ec) > kMaxCdfFileBytes)
      why = ": it is larger than 16MiB";
    else
      in.open(file);
    if (!in.is_open() || !in) {
      d.c.error(ce->value, ce->path,
                "expected websearch, hadoop or a readable CDF file, got '" + fl.cdf + "'" + why);
      return;
    }
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (auto pts = parse_cdf(text, error))
    fl.points = std::move(*pts);
  else if (ce)
    d.c.error(ce->value, ce->path, fl.cdf + ": " + error);
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

class Run final : public WorkloadRun {
 public:
  Run(WorkloadEnv& env, const WorkloadConfig& w, uint64_t seed) : WorkloadRun(w), run_(env, w_, seed) {}
  void start() override { run_.start(); }
  bool finished() const override { return run_.finished(); }
  FlowStats result() const override { return run_.result(); }
  void each_qp(const std::function<void(const Host&, const verbs::QueuePair*)>& f) const override {
    run_.each_qp(f);
  }
  FlowsRun* flows_run() const override { return &run_; }
  const std::vector<FlowRecord>* flow_records() const override { return &run_.records(); }

 private:
  mutable FlowsRun run_;
};

class FlowsWorkload final : public Workload {
 public:
  std::vector<std::string_view> names() const override { return {"flows"}; }
  const KeyTableBase& keys() const override { return flows_keys(); }

  bool read(ExperimentDraft& d, const Fields& f, WorkloadConfig& w, const Entry& kind) const override {
    w.kind = WorkloadKind::flows;
    for (std::string_view key : {"from", "to"})
      if (const Entry* e = f.find(key))
        d.c.error(e->key, e->path, "flows takes hosts: [list], not from and to");
    const auto op = read_op(d, f, w);
    if (!op) return false;
    if (const Entry* e = f.find("hosts")) {
      if (auto l = host_list(d, *e)) w.from = *l;
      if (w.from.size() == 1) d.c.error(e->value, e->path, "flows needs at least two hosts");
    } else if (d.graph) {
      w.from = d.x.topology.hosts;
      if (d.x.topology.hosts.size() < 2) d.c.error(f.node, f.path, "flows needs at least two hosts");
    }
    w.to = w.from;
    flow_cdf(d, f, w);
    const KeyFields k = flows_keys().read(d.c, f, w);
    // add, compare and swap are not flows' keys (the loader says so); a
    // value given them is read as the verbs kinds read it, for their errors.
    atomic_operand_keys().read(d.c, f, w);
    return check_verbs(d, k, w, *op, kind, f.find("cdf"));
  }
  void validate(ExperimentDraft& d, size_t read) const override { check_ends(d, read); }

  // A flow is a connection kept to its end: senders x load x rate x
  // duration / mean size of them. A sender's link is a queue at
  // utilisation `load`: about load / (1 - load) flows in it at once (M/G/1
  // with processor sharing), a byte's flow of the size-biased mean; and
  // never more than every flow's bytes. Computed payloads (payload:
  // pattern) are stored nowhere; a byte stream's buffers are counted apart
  // (stream_buffer_bytes).
  WorkloadMemory memory(const ExperimentConfig& x, const WorkloadConfig& w) const override {
    const auto [mean, biased] = flow_size_means(w.flows);
    WorkloadMemory m;
    // Flows arrive for `duration`, or until the run stops.
    Time arriving = w.flows.duration;
    if (x.stop) arriving = *x.stop <= w.start ? Time{} : std::min(arriving, *x.stop - w.start);
    m.connections =
        static_cast<uint64_t>(static_cast<double>(w.from.size()) * w.flows.load *
                              static_cast<double>(fastest_host_link(x).bps()) / 8 * arriving.to_s() / mean) +
        1;
    m.flows = m.connections;
    // A sender is busy a share of the time that grows with the load (its flows overlap).
    m.sending = static_cast<double>(w.from.size()) * std::min(1.0, 2 * w.flows.load);
    const double all = 2 * static_cast<double>(m.connections) * mean;
    const double load = w.flows.load;
    const double at_once =
        load >= 1 ? all : 2 * static_cast<double>(w.from.size()) * load / (1 - load) * biased;
    double stored = std::min(all, at_once);
    if (w.computed_payload) stored = 0;  // sockets too: socket_flow.cpp sends from the pattern
    m.buffer_bytes = static_cast<uint64_t>(stored);
    // What a sender posts at once: a flow whole, its bytes of the size-biased
    // mean. Twice the flows the sender's queue alone would hold at light
    // load (the receivers' links are queues too), and no more than 2.2 a
    // sender at load 1: a connection gives its send buffer back once its
    // flow is acknowledged (RecordQueue), so an iwarp k = 8 fat tree at
    // load 0.5 peaks at 171 MiB, not the 240 it did when finished flows
    // kept theirs (docs/performance.md).
    const double per_sender = load >= 1 ? 2.2 : std::min(2 * load / (1 - load), 2.2 * load);
    m.posting = std::min(static_cast<double>(m.connections), static_cast<double>(w.from.size()) * per_sender);
    m.posted_per_connection = static_cast<uint64_t>(biased);
    m.buffers = "of flows";
    return m;
  }
  bool spans_ranks(const WorkloadConfig& w, const ExperimentConfig& x) const override {
    const WorkloadKind op = basic_op(w);
    // Sockets (fabric: tcp), and verbs SENDs of every QP type: the receiver
    // checks what it read against the pattern, on its own rank.
    if (op == WorkloadKind::send || op == WorkloadKind::send_imm) return true;
    // A WRITE's receiver has no program: its memory is checked when the
    // sender's completion ends the flow, which for RC comes after the data
    // landed (the ACK). A UC WRITE completes when it is sent: the check
    // reads memory the data may not have reached yet, at a time the
    // receiver's rank cannot see, so UC WRITEs stay on one rank.
    return op == WorkloadKind::rdma_write && w.qp == QpType::rc && fabric_of(x).host_nic().verbs;
  }

  std::unique_ptr<WorkloadRun> attach(WorkloadEnv& env, const WorkloadConfig& w,
                                      uint64_t seed) const override {
    return std::make_unique<Run>(env, w, seed);
  }
  void results(const ExperimentConfig&, const WorkloadConfig& w, const FlowStats& s,
               nlohmann::json& j) const override {
    message_results(w, s, "flow_completion", j);
  }
  bool latency_samples() const override { return true; }
};

}  // namespace

const Workload& flows_workload() {
  static const FlowsWorkload k;
  return k;
}

}  // namespace rdmasim
