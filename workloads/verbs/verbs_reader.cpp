#include "workloads/verbs/verbs_reader.hpp"

#include "fabrics/registry.hpp"

namespace rdmasim {

namespace {

// payload: pattern (computed) or memory (stored bytes). Every kind whose
// buffers no program reads as bytes computes them unless told `memory`:
// flows, and RC WRITEs and READs that are not ping-pongs, where every byte
// of a slot is what its flow wrote (workloads/workload.cpp, fill_message),
// so the slot's bytes are computable; a ping-pong's markers and a SEND's
// receive buffers are read by their programs, and stay in memory.
void payload(ExperimentDraft& d, const Fields& f, WorkloadConfig& w, WorkloadKind op) {
  const bool pingpong = w.kind == WorkloadKind::pingpong || w.kind == WorkloadKind::write_lat ||
                        w.kind == WorkloadKind::send_lat;
  const bool one_sided =
      op == WorkloadKind::rdma_write || op == WorkloadKind::rdma_write_imm || op == WorkloadKind::rdma_read;
  const bool computable = w.kind == WorkloadKind::flows ||
                          (one_sided && !pingpong && w.qp == QpType::rc && fabric_of(d.x).host_nic().verbs);
  w.computed_payload = computable;
  const Entry* e = f.find("payload");
  if (!e) return;
  const auto v = d.c.one_of(e->value, e->path, "the payload", {"pattern", "memory"});
  if (!v) return;
  w.computed_payload = *v == "pattern";
  if (w.computed_payload && !computable)
    d.c.error(e->value, e->path,
              "payload: pattern is for flows and for RC rdma_write, rdma_write_imm and rdma_read workloads "
              "(not ping-pongs) on an RDMA fabric; " +
                  std::string(to_string(w.kind)) + " here keeps payload: memory");
}

long double as_ps(Time t) { return static_cast<long double>(t.count()); }

}  // namespace

std::vector<Key<WorkloadConfig>> with_verbs_knobs(std::vector<Key<WorkloadConfig>> rows) {
  using namespace keys;
  using W = WorkloadConfig;
  for (Key<W>& k : std::vector<Key<W>>{
           key("timeout", &W::timeout, whole(0, 31), "14",
               "local ACK timeout, 4.096 µs × 2^timeout (`ibv_qp_attr.timeout`)"),
           key("retry_cnt", &W::retry_cnt, whole(0, 7), "7",
               "transport retries before `IBV_WC_RETRY_EXC_ERR`"),
           key("rnr_retry", &W::rnr_retry, whole(0, 7), "7", "RNR retries; 7 means forever"),
           key("min_rnr_timer", &W::min_rnr_timer, whole(0, 31), "12",
               "RNR NAK timer, in the IBA encoding (12 = 0.64 ms)"),
           key("post_recvs", &W::post_recvs, boolean(), "true",
               "`false`: the receiver posts no receive buffers (to see RNR NAKs)"),
           key("bad_rkey", &W::bad_rkey, boolean(), "false",
               "the sender uses a wrong rkey (to see a remote access error); not for SEND"),
           key("inline_threshold", &W::inline_threshold, whole(0, 65536), "0",
               "messages up to this size are posted with `IBV_SEND_INLINE`"),
       })
    rows.push_back(std::move(k));
  return rows;
}

const KeyTable<WorkloadConfig>& atomic_operand_keys() {
  using namespace keys;
  using W = WorkloadConfig;
  // fetch-and-add adds compare_add; compare-and-swap compares with it
  // (0 unless given: the verbs kinds set that before their table reads)
  // and swaps in `swap`.
  static const KeyTable<W> t{
      "atomic operands",
      "a workload",
      {
          key("add", &W::compare_add, whole(0, UINT64_MAX), "1", "`atomic_fadd`: the value added"),
          documented_default(
              key("compare", &W::compare_add, whole(0, UINT64_MAX), "", "`atomic_cas`: the value compared"),
              "0"),
          key("swap", &W::swap, whole(0, UINT64_MAX), "1", "`atomic_cas`: the value swapped in"),
      }};
  return t;
}

WorkloadKind implied_op(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::pingpong:  // a SEND ping-pong, as ib_send_lat (Flow::ping)
      return WorkloadKind::send;
    case WorkloadKind::incast:
    case WorkloadKind::all_to_all:
    case WorkloadKind::flows:
    case WorkloadKind::write_bw:
    case WorkloadKind::write_lat:
      return WorkloadKind::rdma_write;
    case WorkloadKind::read_bw:
    case WorkloadKind::read_lat:
      return WorkloadKind::rdma_read;
    case WorkloadKind::send_bw:
    case WorkloadKind::send_lat:
      return WorkloadKind::send;
    case WorkloadKind::atomic_bw:
    case WorkloadKind::atomic_lat:
      return WorkloadKind::atomic_fadd;
    default:
      return kind;
  }
}

std::optional<WorkloadKind> read_op(ExperimentDraft& d, const Fields& f, WorkloadConfig& w) {
  WorkloadKind op = implied_op(w.kind);
  const bool flows = w.kind == WorkloadKind::flows;
  const bool atomic_kind = w.kind == WorkloadKind::atomic_bw || w.kind == WorkloadKind::atomic_lat;
  const Entry* ope = f.find("op");
  if (ope && (is_pattern(w.kind) || atomic_kind || flows)) {
    auto o = d.c.choice<WorkloadKind>(*ope, "operation");
    if (!o) return std::nullopt;
    if (!is_basic(*o)) {
      d.c.error(ope->value, ope->path,
                "op must be a basic operation: send, send_imm, rdma_write, rdma_write_imm, "
                "rdma_read, atomic_cas or atomic_fadd");
      return std::nullopt;
    }
    // A ping-pong's messages are SENDs whatever op said (rdma_write, its
    // default, ran SENDs and reported rdma_write).
    if (w.kind == WorkloadKind::pingpong && *o != WorkloadKind::send) {
      d.c.error(ope->value, ope->path,
                "pingpong is a SEND ping-pong and takes op: send (write_lat is the RDMA WRITE ping-pong)");
      return std::nullopt;
    }
    if (flows && *o != WorkloadKind::rdma_write && *o != WorkloadKind::send) {
      d.c.error(ope->value, ope->path, "flows takes op: rdma_write or send");
      return std::nullopt;
    }
    if (atomic_kind && !is_atomic(*o)) {
      d.c.error(ope->value, ope->path, "atomic_bw and atomic_lat take op: atomic_cas or atomic_fadd");
      return std::nullopt;
    }
    op = *o;
  }
  w.op = std::string(to_string(op));
  return op;
}

bool check_verbs(ExperimentDraft& d, const KeyFields& f, WorkloadConfig& w, WorkloadKind op,
                 const Entry& kind, const Entry* sizes_at) {
  auto only = [&](std::string_view key, bool allowed, const std::string& why) {
    if (const Entry* e = f.find(key); e && !allowed) d.c.error(e->key, e->path, why);
  };
  if (const Entry* e = f.find("bad_rkey");
      e && w.bad_rkey && (op == WorkloadKind::send || op == WorkloadKind::send_imm))
    d.c.error(e->value, e->path, "SEND uses no rkey; bad_rkey applies to RDMA and atomic operations");

  // Atomic operands.
  only("add", op == WorkloadKind::atomic_fadd, "add is only for atomic_fadd, not " + w.op);
  only("compare", op == WorkloadKind::atomic_cas, "compare is only for atomic_cas, not " + w.op);
  only("swap", op == WorkloadKind::atomic_cas, "swap is only for atomic_cas, not " + w.op);

  const Entry* qe = f.find("qp");
  if (qe && !f.read_ok("qp")) return false;
  payload(d, f, w, op);
  // What the fabric's transport can carry (the IBA service types; RFC 5040 for iWARP).
  const Entry* ope = f.find("op");
  const Entry& op_at = ope ? *ope : kind;  // where to point at errors about the operation
  const bool size_checked =
      fabric_of(d.x).check_workload(d, w, WorkloadSites{kind, op_at, qe ? *qe : kind, sizes_at});
  const Entry* se = f.find("size");
  if (!size_checked && w.size.count() > (uint64_t{1} << 31) && se) {
    d.c.error(se->value, se->path,
              "a message is at most 2GiB (2^31 bytes, the IBA limit), got " + to_string(w.size));
  }
  return true;
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
void check_ends(ExperimentDraft& d, size_t read) {
  const ExperimentConfig& x = d.x;
  if (x.stop || x.topology.links.empty()) return;
  DataRate fastest;
  Time shortest = Time::max();
  for (const LinkSpec& l : x.topology.links) {
    fastest = std::max(fastest, l.config.bandwidth);
    shortest = std::min(shortest, l.config.delay);
  }
  const ExperimentDraft::ReadWorkload& r = d.workloads_read[read];
  const WorkloadConfig& w = x.workloads[r.index];
  const YAML::Node count_at = r.node["count"] ? r.node["count"] : r.node;
  // A ping-pong's receives are its own (it always posts them).
  const bool consumes =
      (w.op == "send" || w.op == "send_imm" || w.op == "rdma_write_imm") && w.kind != WorkloadKind::pingpong;
  if (!w.post_recvs && consumes && w.qp == QpType::rc && w.rnr_retry == 7 && fabric_of(x).rnr_naks()) {
    d.c.error(r.node["post_recvs"], r.path + ".post_recvs",
              "this workload never ends: its receiver posts no receive buffers, so every " + w.op +
                  " is answered with an RNR NAK, and rnr_retry 7 retries forever (IBA 9.7.5.2.8); give stop, "
                  "or an rnr_retry below 7");
    return;
  }
  const bool waits = w.kind == WorkloadKind::pingpong || w.kind == WorkloadKind::write_lat ||
                     w.kind == WorkloadKind::read_lat || w.kind == WorkloadKind::send_lat ||
                     w.kind == WorkloadKind::atomic_lat;
  const long double per_message =
      std::max(as_ps(fastest.tx_time(std::min<uint64_t>(w.size.count(), uint64_t{1} << 31) + 26)),
               waits ? 4 * as_ps(shortest) : 0.0L);
  const long double need = static_cast<long double>(w.count) * per_message;
  if (need <= as_ps(kMaxTimeValue)) return;
  d.c.error(count_at, r.path + ".count",
            "without stop this cannot end within " + to_string(kMaxTimeValue) +
                " of simulated time (the longest stop may be): " + std::to_string(w.count) +
                " messages take at least " + seconds_text(need) + "; give stop, or a smaller count");
}

}  // namespace rdmasim
