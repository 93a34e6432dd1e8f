// The verbs kinds: a basic operation between two hosts (send, rdma_write,
// ...), the patterns (incast, all_to_all, pingpong, with `op`) and the
// perftest kinds (write_bw, send_lat, ...). Each is one or more pairs of
// hosts, a connected QP pair and its verbs programs a pair (workloads/flow.hpp).
#include <algorithm>
#include <nlohmann/json.hpp>

#include "fabrics/registry.hpp"
#include "workloads/flow.hpp"
#include "workloads/socket_flow.hpp"
#include "workloads/verbs/perftest_report.hpp"
#include "workloads/verbs/verbs_reader.hpp"
#include "workloads/workload_kind.hpp"
#include "workloads/workload_memory.hpp"
#include "workloads/workload_reader.hpp"
#include "workloads/workload_results.hpp"

namespace rdmasim {

namespace {

// The verbs kinds' keys. Sizes, counts and depths default by kind
// (perftest_defaults) before the table reads them; hosts, op, payload and
// cq_moderation are read by `read`.
const KeyTable<WorkloadConfig>& verbs_keys() {
  using namespace keys;
  using W = WorkloadConfig;
  static const KeyTable<W> t{
      "workloads.send", "a workload", [] {
        std::vector<Key<W>> k{
            declared<W>("from", "host name (incast: list of host names)", "",
                        "the sender(s); required but for `all_to_all`"),
            declared<W>("to", "host name", "", "the receiver; required but for `all_to_all`"),
            declared<W>("senders", "whole number", "",
                        "`incast` only, instead of `from`: the first N hosts other than `to`, in "
                        "`topology.hosts` order"),
            declared<W>("hosts", "list of host names", "all hosts",
                        "`all_to_all`: every host sends to every other"),
            key("qp", &W::qp, choice<QpType>("QP type"), "rc", "QP transport type"),
            documented_default(
                key("size", &W::size, size(/*positive=*/false), "4KiB",
                    "bytes per message (atomics: `8`); `0` is a legal zero-length SEND, WRITE or READ"),
                "4KiB (perftest kinds: 64KiB for *_bw, 2 for *_lat)"),
            documented_default(key("count", &W::count, at_least(1), "1",
                                   "messages per sender-receiver pair (perftest's `-n`)"),
                               "1 (perftest kinds: 5000 for *_bw, 1000 for *_lat)"),
            // A QP's send queue holds 16384 work requests (the RNIC's
            // max_qp_wr); a workload keeps one more than `outstanding` posted.
            documented_default(key("outstanding", &W::outstanding, whole(1, 16383), "1",
                                   "work requests in flight per QP (perftest's `-t`, tx-depth; a send queue "
                                   "holds 16384, the RNIC's `max_qp_wr`)"),
                               "1 (perftest kinds: 128 for *_bw, 1 for *_lat)"),
            row<W>("cq_moderation", "whole number", "100, 1 above 8KiB", "1..1024",
                   "perftest `*_bw` kinds: one send work request in N is signalled (perftest's `-Q`)", ""),
            key("start", &W::start, time(), "0", "when the senders begin"),
            declared<W>(
                "op", "a basic kind", "rdma_write",
                "patterns (`incast`, `all_to_all`): the operation each message uses; `pingpong`: `send` "
                "(its default), a SEND ping-pong (`write_lat` is the RDMA WRITE one). "
                "`atomic_bw`/`atomic_lat`: `atomic_fadd` (default) or `atomic_cas`"),
        };
        for (const Key<W>& r : atomic_operand_keys().keys()) k.push_back(r);
        k.push_back(declared<W>("payload", "`pattern` or `memory`", "",
                                "where the messages' bytes live: `pattern` where allowed (RC WRITEs and "
                                "READs), else `memory` (below)"));
        return with_verbs_knobs(std::move(k));
      }()};
  return t;
}

// What a workload's latency samples are (docs/yaml.md, "Latency"): half a
// ping-pong's round trip, as perftest's ib_send_lat and ib_write_lat report
// it, or the time from posting to the sender's completion (perftest's
// ib_read_lat and ib_atomic_lat report that whole, rtt_factor 1).
// `sockets`: the workload ran over kernel TCP sockets (fabric: tcp), where
// a message has no completion: it is timed to the receiving program.
const char* latency_measure(WorkloadKind k, bool sockets) {
  switch (k) {
    case WorkloadKind::pingpong:
    case WorkloadKind::send_lat:
    case WorkloadKind::write_lat:
      return "half_round_trip";
    default:
      return sockets ? "send_to_receive" : "post_to_completion";
  }
}

bool pingpong(WorkloadKind k) {
  return k == WorkloadKind::pingpong || k == WorkloadKind::send_lat || k == WorkloadKind::write_lat;
}

// Every pair of hosts a message workload runs between, in order.
std::vector<std::pair<std::string, std::string>> host_pairs(const WorkloadConfig& w) {
  std::vector<std::pair<std::string, std::string>> pairs;
  if (w.kind == WorkloadKind::incast) {
    for (const auto& f : w.from) pairs.emplace_back(f, w.to.at(0));
  } else if (w.kind == WorkloadKind::all_to_all) {
    for (const auto& f : w.from)
      for (const auto& t : w.to)
        if (f != t) pairs.emplace_back(f, t);
  } else {
    pairs.emplace_back(w.from.at(0), w.to.at(0));
  }
  return pairs;
}

// The run: a flow per pair of hosts.
class PairsRun final : public WorkloadRun {
 public:
  PairsRun(WorkloadEnv& env, const WorkloadConfig& w, uint64_t seed)
      : WorkloadRun(w), env_(env), seed_(seed) {}

  void start() override {
    // Latency tests run one operation at a time.
    if (w_.kind == WorkloadKind::write_lat || w_.kind == WorkloadKind::read_lat ||
        w_.kind == WorkloadKind::atomic_lat)
      w_.outstanding = 1;
    const bool pp = pingpong(w_.kind);
    // write_lat is a ping-pong of RDMA WRITEs; the others of SENDs.
    const WorkloadKind op = w_.kind == WorkloadKind::write_lat ? WorkloadKind::rdma_write
                            : pp                               ? WorkloadKind::send
                                                               : basic_op(w_);
    uint64_t i = 0;
    for (const auto& [from, to] : host_pairs(w_)) {
      Host* a = env_.host(from);
      Host* b = env_.host(to);
      if (!a || !b) throw std::logic_error("workload names an unknown host");
      auto flow = make_pair_flow(env_, w_, *a, *b, op, pp, i,
                                 Rng::stream(seed_, w_.name + ":" + std::to_string(i)).next());
      ++i;
      flow->setup();
      flows_.push_back(std::move(flow));
    }
    for (auto& f : flows_) f->start();
  }
  bool finished() const override {
    return std::all_of(flows_.begin(), flows_.end(), [](const auto& f) { return f->finished_here(); });
  }
  FlowStats result() const override {
    std::vector<FlowStats> each;
    for (const auto& f : flows_) each.push_back(f->result());
    return result_of(each);
  }
  void each_qp(const std::function<void(const Host&, const verbs::QueuePair*)>& f) const override {
    for (const auto& flow : flows_) flow->each_qp(f);
  }
  std::vector<Flow*> pair_flows() const override {
    std::vector<Flow*> out;
    for (const auto& f : flows_)
      if (auto* flow = dynamic_cast<Flow*>(f.get())) out.push_back(flow);
    return out.size() == flows_.size() ? out : std::vector<Flow*>{};
  }

 private:
  WorkloadEnv& env_;
  uint64_t seed_;
  std::vector<std::unique_ptr<PairFlow>> flows_;
};

// incast: the receiver in `to`, the senders in `from` (a list, or the first `senders:` hosts).
void incast_hosts(ExperimentDraft& d, const Fields& f, WorkloadConfig& w) {
  if (auto to = one_host(d, f, "to")) w.to = {*to};
  const Entry* fe = f.find("from");
  const Entry* se = f.find("senders");
  if (fe && se) {
    d.c.error(se->key, se->path, "give either from (a list of senders) or senders (a count), not both");
  } else if (fe) {
    if (auto l = host_list(d, *fe)) {
      w.from = *l;
      if (!w.to.empty() && std::find(w.from.begin(), w.from.end(), w.to[0]) != w.from.end())
        d.c.error(fe->value, fe->path, "'" + w.to[0] + "' is both a sender and the receiver");
    }
  } else if (se) {
    const size_t hosts = d.x.topology.hosts.size();
    if (auto n = d.c.whole(*se, 1, std::max<size_t>(hosts, 2) - 1)) {
      // The first n hosts other than the receiver, in topology order.
      for (const std::string& h : d.x.topology.hosts)
        if (w.from.size() < *n && (w.to.empty() || h != w.to[0])) w.from.push_back(h);
    }
  } else {
    d.c.missing(f, "from", "incast needs from: [senders] or senders: N");
  }
}

bool bw_kind(WorkloadKind k) {
  return k == WorkloadKind::write_bw || k == WorkloadKind::read_bw || k == WorkloadKind::send_bw ||
         k == WorkloadKind::atomic_bw;
}

// perftest 4.5's defaults (perftest_parameters.h: DEF_SIZE_BW, DEF_SIZE_LAT,
// DEF_ITERS_WB, DEF_ITERS, DEF_TX_BW, DEF_TX_LAT), before the keys given.
void perftest_defaults(WorkloadConfig& w) {
  const bool bw = bw_kind(w.kind);
  w.size = Bytes(bw ? 65536 : 2);
  w.count = bw ? 5000 : 1000;
  w.outstanding = bw ? 128 : 1;
}

// cq_moderation: perftest's DEF_CQ_MOD (100) for the bandwidth kinds, turned
// off (1) for messages above 8 KiB on a connected QP unless given
// (MSG_SIZE_CQ_MOD_LIMIT), and never above the tx-depth; the latency kinds
// signal every work request (their tx-depth is 1).
void cq_moderation(ExperimentDraft& d, const Fields& f, WorkloadConfig& w) {
  const Entry* e = f.find("cq_moderation");
  if (e && !bw_kind(w.kind)) {
    d.c.error(e->key, e->path,
              "only the perftest bandwidth kinds (write_bw, read_bw, send_bw, atomic_bw) take cq_moderation");
    return;
  }
  if (!bw_kind(w.kind)) return;
  w.cq_moderation = w.size.count() > 8192 && w.qp != QpType::ud ? 1 : 100;
  d.c.read(f, "cq_moderation", w.cq_moderation, [&](const Entry& x) { return d.c.whole(x, 1, 1024); });
  w.cq_moderation = std::min(w.cq_moderation, std::max<uint32_t>(w.outstanding, 1));
}

// A `size` the table read that the operation or the kind cannot take
// (zero-length messages are legal verbs, but not write_lat's).
void check_size(ExperimentDraft& d, const KeyFields& f, const WorkloadConfig& w, WorkloadKind op) {
  const Entry* se = f.read_ok("size");
  if (!se) return;
  if (is_atomic(op) && w.size.count() != 8)
    d.c.error(se->value, se->path,
              "atomic operations move exactly 8 bytes (one 64-bit word), got " + to_string(w.size));
  if (w.kind == WorkloadKind::write_lat && w.size.count() == 0)
    d.c.error(se->value, se->path,
              "write_lat needs at least 1 byte: each side polls the last byte of what the other wrote");
}

// What perftest prints at the end of the test the kind imitates (docs/yaml.md,
// "perftest kinds"); null figures when the run has too few messages for them.
nlohmann::json perftest_results(const WorkloadConfig& w, const FlowStats& s) {
  nlohmann::json j = {{"iterations", w.count},
                      {"tx_depth", w.outstanding},
                      {"cq_moderation", w.cq_moderation},
                      {"inline_size", w.inline_threshold}};
  if (bw_kind(w.kind)) {
    const auto r = perftest_bw(w.size.count(), s.posted_ps, s.completed_ps);
    j["bw_peak_mb_s"] = r ? nlohmann::json(r->bw_peak_mb_s) : nullptr;
    j["bw_average_mb_s"] = r ? nlohmann::json(r->bw_average_mb_s) : nullptr;
    j["bw_average_gbps"] = r ? nlohmann::json(r->bw_average_gbps) : nullptr;
    j["msg_rate_mpps"] = r ? nlohmann::json(r->msg_rate_mpps) : nullptr;
    return j;
  }
  // perftest halves a SEND or WRITE round trip; a READ or an atomic is one already.
  const WorkloadKind op = implied_op(w.kind);
  const auto r =
      perftest_lat(s.posted_ps, op == WorkloadKind::send || op == WorkloadKind::rdma_write ? 2 : 1);
  for (const auto& [key, v] : {std::pair{"t_min_us", &PerftestLat::t_min_us},
                               {"t_max_us", &PerftestLat::t_max_us},
                               {"t_typical_us", &PerftestLat::t_typical_us},
                               {"t_avg_us", &PerftestLat::t_avg_us},
                               {"t_stdev_us", &PerftestLat::t_stdev_us},
                               {"p99_us", &PerftestLat::p99_us},
                               {"p999_us", &PerftestLat::p999_us}})
    j[key] = r ? nlohmann::json((*r).*v) : nullptr;
  return j;
}

class VerbsWorkload final : public Workload {
 public:
  std::vector<std::string_view> names() const override {
    std::vector<std::string_view> out;
    for (size_t i = 0; i < std::size(EnumNames<WorkloadKind>::names); ++i) {
      const auto k = static_cast<WorkloadKind>(i);
      if (k != WorkloadKind::flows && k != WorkloadKind::compute && k != WorkloadKind::udp)
        out.push_back(EnumNames<WorkloadKind>::names[i]);
    }
    return out;
  }
  const KeyTableBase& keys() const override { return verbs_keys(); }

  bool read(ExperimentDraft& d, const Fields& f, WorkloadConfig& w, const Entry& kind) const override {
    w.kind = *from_string<WorkloadKind>(w.kind_name);
    // Keys that belong to some of these kinds only.
    auto only = [&](std::string_view key, bool allowed, const std::string& why) {
      if (const Entry* e = f.find(key); e && !allowed) d.c.error(e->key, e->path, why);
    };
    const std::string kind_name(to_string(w.kind));
    const bool all_to_all = w.kind == WorkloadKind::all_to_all;
    const bool atomic_kind = w.kind == WorkloadKind::atomic_bw || w.kind == WorkloadKind::atomic_lat;
    only("senders", w.kind == WorkloadKind::incast, "only incast takes senders, not " + kind_name);
    only("hosts", all_to_all, "only all_to_all and flows take hosts; " + kind_name + " takes from and to");
    only("from", !all_to_all, kind_name + " takes hosts: [list], not from and to");
    only("to", !all_to_all, kind_name + " takes hosts: [list], not from and to");
    only("op", is_pattern(w.kind) || atomic_kind,
         "only incast, all_to_all, pingpong, atomic_bw and atomic_lat take op; " + kind_name +
             " implies its operation");
    const auto op = read_op(d, f, w);
    if (!op) return false;
    if (all_to_all) {
      if (const Entry* e = f.find("hosts")) {
        if (auto l = host_list(d, *e)) w.from = *l;
        if (w.from.size() == 1) d.c.error(e->value, e->path, kind_name + " needs at least two hosts");
      } else if (d.graph) {
        w.from = d.x.topology.hosts;
        if (d.x.topology.hosts.size() < 2) d.c.error(f.node, f.path, kind_name + " needs at least two hosts");
      }
      w.to = w.from;
    } else if (w.kind == WorkloadKind::incast) {
      incast_hosts(d, f, w);
    } else {
      from_to(d, f, w);
    }
    // The kind's defaults, then what the file says.
    if (is_perftest(w.kind)) perftest_defaults(w);
    if (is_atomic(*op)) w.size = Bytes(8);
    if (*op == WorkloadKind::atomic_cas) w.compare_add = 0;
    const KeyFields k = verbs_keys().read(d.c, f, w);
    check_size(d, k, w, *op);
    const bool ok = check_verbs(d, k, w, *op, kind, f.find("size"));
    cq_moderation(d, f, w);
    return ok;
  }
  void validate(ExperimentDraft& d, size_t read) const override { check_ends(d, read); }

  WorkloadMemory memory(const ExperimentConfig& x, const WorkloadConfig& w) const override {
    WorkloadMemory m;
    m.connections = w.kind == WorkloadKind::all_to_all ? w.from.size() * (w.from.size() - 1)
                                                       : w.from.size() * w.to.size();
    m.buffer_bytes = message_buffer_bytes(x, w, m.connections);
    m.buffers = "of " + to_string(w.size) + " messages";
    m.posting = static_cast<double>(m.connections);
    m.posted_per_connection =
        sat_mul(w.size.count(), std::max<uint64_t>(1, std::min<uint64_t>(w.count, w.outstanding)));
    // A sender's worth each, up to four for one with as many connections sending at once.
    if (!w.from.empty())
      m.sending =
          static_cast<double>(w.from.size()) *
          std::clamp(static_cast<double>(m.connections) / static_cast<double>(w.from.size()), 1.0, 4.0);
    return m;
  }
  bool spans_ranks(const WorkloadConfig& w, const ExperimentConfig& x) const override {
    // write_lat's two busy-polling sides stop the moment the other fails
    // (Flow::write_ping), which another rank would learn a window later.
    return w.kind != WorkloadKind::write_lat && fabric_of(x).host_nic().verbs;
  }

  std::unique_ptr<WorkloadRun> attach(WorkloadEnv& env, const WorkloadConfig& w,
                                      uint64_t seed) const override {
    return std::make_unique<PairsRun>(env, w, seed);
  }
  void results(const ExperimentConfig& x, const WorkloadConfig& w, const FlowStats& s,
               nlohmann::json& j) const override {
    message_results(w, s, latency_measure(w.kind, fabric_of(x).host_nic().sockets), j);
    // perftest runs on RDMA devices: over kernel sockets (fabric: tcp) there is nothing to imitate.
    if (is_perftest(w.kind) && fabric_of(x).host_nic().verbs) j["perftest"] = perftest_results(w, s);
  }
  bool latency_samples() const override { return true; }
};

}  // namespace

const Workload& verbs_workload() {
  static const VerbsWorkload k;
  return k;
}

}  // namespace rdmasim
