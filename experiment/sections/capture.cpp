// `capture:`, which ports are captured and how.
#include "experiment/sections/sections.hpp"

namespace rdmasim {

using namespace keys;

namespace {

const KeyTable<CaptureConfig>& cpu_trace_keys() {
  static const KeyTable<CaptureConfig> t{
      "capture.cpu_trace",
      "CPU trace settings",
      {
          key("from", &CaptureConfig::cpu_trace_from, time(), "0", "the window's start"),
          key("to", &CaptureConfig::cpu_trace_to, time(), "",
              "the window's end, after `from` (default: the run's end)"),
      }};
  return t;
}

// The finest time series: every sample is a row per port and QP, so one a
// picosecond took 16 s to fill the 1 GiB budget on the quickstart, and
// no queue holds a frame for less than a nanosecond below 400 Gb/s.
ValueType<Time> sampling_interval() {
  return time_from(Time::ns(1), "finer samples only fill capture.max_bytes, within microseconds of the run");
}

const KeyTable<TimeSeriesConfig>& timeseries_keys() {
  static const KeyTable<TimeSeriesConfig> t{
      "capture.timeseries",
      "time series settings",
      {
          required(key("interval", &TimeSeriesConfig::interval, sampling_interval(), "",
                       "how often to sample: at time 0 and every `interval` after it up to the run's end "
                       "(`end_time_ps`), each sample the state at its time before that time's events run; "
                       "sampling is no event, so the run's results are those without a time series"),
                   "how often to sample, such as 10us"),
          declared<TimeSeriesConfig>(
              "ports", "`all`, `none`, or a list of `NODE` or `NODE:PORT`", "all",
              "the ports in `queues.csv`: a node alone means all its ports; `none` writes "
              "no `queues.csv`"),
          declared<TimeSeriesConfig>(
              "qps", "`all`, `none`, or a list of workload names", "all",
              "the workloads whose QPs are in `qps.csv` (names as in `workloads[].name`: "
              "`w0`, `w1`, … when not given); `none` writes no `qps.csv`"),
      }};
  return t;
}

// One of two names, as a bool: is it `yes`? Another is an "unknown `what`"
// error that says it `expected` them.
ValueType<bool> two_names(std::string no, std::string yes, std::string type, std::string what,
                          std::string expected) {
  return {type, "", "", [=](YamlReader& c, const Entry& e) -> std::optional<bool> {
            auto s = c.scalar(e.value, e.path, no + " or " + yes);
            if (s && (*s == no || *s == yes)) return *s == yes;
            if (s) c.error(e.value, e.path, "unknown " + what + " '" + *s + "'; expected " + expected);
            return std::nullopt;
          }};
}

// cpu_trace: true | false | {from: TIME, to: TIME}.
void read_cpu_trace(ExperimentDraft& d, const Entry& e) {
  CaptureConfig& c = d.x.capture;
  if (!e.value.IsMap()) {
    if (auto b = d.c.boolean(e)) c.cpu_trace = *b;
    return;
  }
  const auto f = cpu_trace_keys().read(d.c, e.value, e.path, c);
  if (!f) return;
  c.cpu_trace = true;
  if (const Entry* to = f->find("to"); to && c.cpu_trace_to <= c.cpu_trace_from)
    d.c.error(to->value, to->path,
              "the window must end after it starts (from " + to_string(c.cpu_trace_from) + ")");
}

// ports: / qps: all, none, or a list whose names the validate pass checks
// against the topology and the workloads. Returns whether it is `all`.
bool read_selection(ExperimentDraft& d, const Entry& e, std::optional<Entry>& list, const std::string& what) {
  if (e.value.IsSequence()) {
    if (e.value.size() == 0) d.c.error(e.value, e.path, "an empty list; write none to sample no " + what);
    list = e;
    return false;
  }
  const std::string expected = "all, none or a list of " + what;
  auto s = d.c.scalar(e.value, e.path, expected);
  if (s && *s != "all" && *s != "none")
    d.c.error(e.value, e.path, "expected " + expected + ", got " + describe(e.value));
  return !s || *s != "none";
}

// timeseries: {interval: 10us, ports: [s0, s1:4], qps: [incast]}: queues.csv
// and qps.csv beside results.json.
void read_timeseries(ExperimentDraft& d, const Entry& t) {
  TimeSeriesConfig c;
  const auto ts = timeseries_keys().read(d.c, t.value, t.path, c);
  if (!ts) return;
  const Entry* ports = ts->find("ports");
  const Entry* qps = ts->find("qps");
  if (ports) c.all_ports = read_selection(d, *ports, d.timeseries_ports, "ports (NODE or NODE:PORT)");
  if (qps) c.all_qps = read_selection(d, *qps, d.timeseries_qps, "workload names");
  if (ports && qps && ports->value.IsScalar() && qps->value.IsScalar() && ports->value.Scalar() == "none" &&
      qps->value.Scalar() == "none")
    d.c.error(t.value, t.path,
              "ports and qps are both none: nothing to sample; leave out timeseries instead");
  d.x.capture.timeseries = c;
}

// pcap: none | hosts | all | a list of node names (the validate pass checks them).
void read_pcap(ExperimentDraft& d, const Entry& p) {
  d.capture_list = p;
  if (p.value.IsSequence() && p.value.size() == 0) {
    d.c.error(p.value, p.path, "an empty list captures nothing; write `pcap: none` for that");
  } else if (p.value.IsSequence()) {
    d.x.capture.mode = CaptureMode::list;
  } else if (auto s = d.c.scalar(p.value, p.path, "none, hosts, all or a list of node names")) {
    auto m = from_string<CaptureMode>(*s);
    if (m && *m != CaptureMode::list)
      d.x.capture.mode = *m;
    else
      d.c.error(p.value, p.path,
                "expected none, hosts, all or a list of node names, got " + describe(p.value));
  }
}

}  // namespace

const KeyTable<CaptureConfig>& capture_keys() {
  using C = CaptureConfig;
  static const KeyTable<C> t{
      "capture",
      "capture settings",
      {
          declared<C>(
              "pcap", "`none`, `hosts`, `all`, or a list of node names", "hosts",
              "which nodes' ports write `pcap/<node>-<port>.pcap`: none, every host port, every port, or "
              "the ports of the listed nodes"),
          key("ib_linktype", &C::ib_linktype_infiniband,
              two_names("erf", "infiniband", "`erf` or `infiniband`", "linktype",
                        "erf (197) or infiniband (247)"),
              "erf",
              "`ib` captures: linktype 197 (ERF records of type INFINIBAND; every Wireshark opens it) or 247 "
              "(INFINIBAND; Wireshark 4.0 refuses it)"),
          key("snaplen", &C::snaplen, whole(64, 262144, "bytes"), "65535", "bytes kept of each frame"),
          key("max_bytes", &C::max_bytes, size(), "1GiB",
              "all capture files of the run together (records and their headers): the first frame that would "
              "pass it ends every capture at that time, the run goes on, and results.json "
              "(`capture.full_at_ps`) and the summary say when (a run split over ranks has one budget for "
              "all "
              "of them: [parallel.md](parallel.md#output-and-failures)); the time series' rows have a budget "
              "of the same size of their own (results.json `timeseries`: `bytes`, `max_bytes`, `full_at_ps` "
              "when sampling stopped)"),
          with_table(
              declared<C>("cpu_trace", "bool, or `{from: T, to: T}`", "false",
                          "per host, the CPU timeline (of the window) in `trace/<host>.json` (trace-event "
                          "JSON: ui.perfetto.dev, chrome://tracing) and `trace/<host>.svg` ([host "
                          "model](host.md#the-cpu-timeline))"),
              cpu_trace_keys()),
          with_table(declared<C>("timeseries", "`{interval: TIME, ports: …, qps: …}`", "",
                                 "every `interval`, each port's egress queue into `timeseries/queues.csv` "
                                 "(`time_ps,node,port,queue_bytes`) and each QP's rate and window into "
                                 "`timeseries/qps.csv` (`time_ps,workload,qp,rate_bps,window_bytes`), beside "
                                 "results.json ([congestion_control.md](congestion_control.md#what-a-run-"
                                 "reports)); `ports` and `qps` narrow them"),
                     timeseries_keys()),
          key("latency_samples", &C::latency_samples, boolean(), "false",
              "every latency sample of every workload in `latency.csv` ([Latency](#latency))"),
      }};
  return t;
}

void read_capture(ExperimentDraft& d, const Entry& e) {
  const auto f = capture_keys().read(d.c, e.value, e.path, d.x.capture);
  if (!f) return;
  if (const Entry* p = f->find("pcap")) read_pcap(d, *p);
  if (const Entry* v = f->find("cpu_trace")) read_cpu_trace(d, *v);
  if (const Entry* t = f->find("timeseries")) read_timeseries(d, *t);
}

}  // namespace rdmasim
