// kind: udp: kernel UDP datagrams from a traffic generator to a program
// (udp_job.hpp), on a fabric without RDMA: the receive livelock experiment.
#include <nlohmann/json.hpp>

#include "fabrics/registry.hpp"
#include "topologies/key_table.hpp"
#include "workloads/udp/udp_job.hpp"
#include "workloads/workload.hpp"
#include "workloads/workload_kind.hpp"
#include "workloads/workload_memory.hpp"
#include "workloads/workload_reader.hpp"
#include "workloads/workload_results.hpp"

namespace rdmasim {

namespace {

const KeyTable<WorkloadConfig>& udp_keys() {
  using namespace keys;
  using W = WorkloadConfig;
  static const KeyTable<W> t{
      "workloads.udp",
      "a workload",
      {
          declared<W>("from", "host name", "", "the generator's host; required"),
          declared<W>("to", "host name", "", "the receiving program's host; required"),
          // Its default is the kind's, its limit the fabric's (read).
          documented_default(key("size", &W::size, size(), "",
                                 "payload bytes of each datagram, at most the path MTU less 28"),
                             "1472"),
          required(key("rate", &W::rate,
                       refusing<DataRate>(
                           rate(), "above 0", [](const DataRate& r) { return r.bps() == 0; },
                           [](const Entry&) { return "the offered rate must be above zero"; }),
                       "", "the offered load, in payload bits"),
                   "the offered load, such as 1Gbps (payload bits)"),
          required(key("duration", &W::duration, positive_time(), "",
                       "how long datagrams are offered, evenly paced"),
                   "how long it offers datagrams, such as 2ms"),
          key("app_cost", &W::app_cost, time(), "0",
              "the program's own CPU time per datagram, after recvmsg"),
          key("start", &W::start, time(), "0", "when the first datagram is sent"),
      }};
  return t;
}

class Run final : public WorkloadRun {
 public:
  Run(WorkloadEnv& env, const WorkloadConfig& w) : WorkloadRun(w), env_(env) {}
  void start() override {
    Host* a = env_.host(w_.from.at(0));
    Host* b = env_.host(w_.to.at(0));
    if (!a || !b) throw std::logic_error("workload names an unknown host");
    job_ = std::make_unique<UdpJob>(env_.sim, *a, *b, w_);
    job_->start();
  }
  bool finished() const override { return job_->finished(); }
  FlowStats result() const override {
    FlowStats all;
    const UdpJob::Counts c = job_->counts();
    all.datagrams = FlowStats::Datagrams{c.offered,      c.received,  c.ring_drops,       c.backlog_drops,
                                         c.socket_drops, c.delivered, c.delivered_in_time};
    all.ops = c.delivered;
    all.bytes = job_->delivered_bytes();
    all.start = job_->first_sent() == Time::max() ? w_.start : job_->first_sent();
    all.end = std::max(all.start, job_->last_delivered());
    all.latency_ps = job_->latency_ps();
    all.finished = job_->finished();
    return all;
  }

 private:
  WorkloadEnv& env_;
  std::unique_ptr<UdpJob> job_;
};

class UdpWorkload final : public Workload {
 public:
  std::vector<std::string_view> names() const override { return {"udp"}; }
  const KeyTableBase& keys() const override { return udp_keys(); }

  bool read(ExperimentDraft& d, const Fields& f, WorkloadConfig& w, const Entry& kind) const override {
    w.kind = WorkloadKind::udp;
    if (!fabric_of(d.x).host_nic().sockets)
      d.c.error(kind.value, kind.path,
                "udp datagrams go through the kernel stack: they need fabric: " +
                    fabric_list([](const Fabric& g) { return g.host_nic().sockets; }) + ", not " +
                    d.x.fabric);
    from_to(d, f, w);
    w.size = Bytes(1472);  // what fits a 1500-byte Ethernet MTU
    const KeyFields k = udp_keys().read(d.c, f, w);
    const uint32_t most = path_mtu(d.x) - 28;  // IPv4 and UDP headers
    if (const Entry* e = k.read_ok("size"); e && w.size.count() > most)
      d.c.error(e->value, e->path,
                "a datagram fits in one frame here: at most " + std::to_string(most) +
                    " bytes (the path MTU less IPv4 and UDP headers), got " + to_string(w.size));
    w.op = "udp";
    return true;
  }
  WorkloadMemory memory(const ExperimentConfig& x, const WorkloadConfig& w) const override {
    const uint64_t pairs = w.from.size() * w.to.size();
    return {pairs, message_buffer_bytes(x, w, pairs), "of " + to_string(w.size) + " messages"};
  }
  std::unique_ptr<WorkloadRun> attach(WorkloadEnv& env, const WorkloadConfig& w, uint64_t) const override {
    return std::make_unique<Run>(env, w);
  }
  // Offered, delivered and where the rest went. The rates are per second
  // of `duration`: offered, and delivered while it was offered (what
  // the program got of a sustained load, not the queues' drain after).
  void results(const ExperimentConfig&, const WorkloadConfig& w, const FlowStats& s,
               nlohmann::json& j) const override {
    const FlowStats::Datagrams& d = *s.datagrams;
    const double dur = w.duration.to_s();
    j["op"] = w.op;
    j["from"] = hosts_json(w.from);
    j["to"] = hosts_json(w.to);
    j["size"] = w.size.count();
    j["rate_gbps"] = w.rate.gbps();
    j["duration_ps"] = w.duration.count();
    j["app_cost_ps"] = w.app_cost.count();
    j["datagrams"] = {
        {"offered", d.offered},
        {"received", d.received},
        {"dropped", d.ring_drops + d.backlog_drops + d.socket_drops},
        {"delivered", d.delivered},
        // Of those, delivered while the load was offered, and after it
        // stopped (what the queues held, drained once the flood was over).
        {"delivered_during_load", d.delivered_in_time},
        {"delivered_after_load", d.delivered - d.delivered_in_time},
        {"dropped_at", {{"ring", d.ring_drops}, {"backlog", d.backlog_drops}, {"socket", d.socket_drops}}}};
    j["offered_pps"] = static_cast<double>(d.offered) / dur;
    j["delivered_pps"] = static_cast<double>(d.delivered_in_time) / dur;
    j["ops"] = s.ops;
    j["bytes"] = s.bytes;
    j["start_ps"] = s.start.count();
    j["end_ps"] = s.end.count();
    j["throughput_gbps"] = throughput_gbps(s);
    j["latency_ns"] = latency_json(s.latency_ps);
    // From the datagram's send (its time rides in the payload) to the receiving program
    // done with it (recvmsg and app_cost): what the socket kinds call send_to_receive.
    j["latency_measure"] = "send_to_receive";
    j["finished"] = s.finished;
  }
};

}  // namespace

const Workload& udp_workload() {
  static const UdpWorkload k;
  return k;
}

}  // namespace rdmasim
