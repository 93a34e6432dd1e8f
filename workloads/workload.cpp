#include "workloads/workload.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>

#include "core/errors.hpp"
#include "fabrics/registry.hpp"
#include "workloads/flow.hpp"
#include "workloads/path_mtu.hpp"

namespace rdmasim {

namespace {

const char* status_name(ibv_wc_status s) {
  static constexpr const char* kNames[] = {"IBV_WC_SUCCESS",
                                           "IBV_WC_LOC_LEN_ERR",
                                           "IBV_WC_LOC_QP_OP_ERR",
                                           "IBV_WC_LOC_EEC_OP_ERR",
                                           "IBV_WC_LOC_PROT_ERR",
                                           "IBV_WC_WR_FLUSH_ERR",
                                           "IBV_WC_MW_BIND_ERR",
                                           "IBV_WC_BAD_RESP_ERR",
                                           "IBV_WC_LOC_ACCESS_ERR",
                                           "IBV_WC_REM_INV_REQ_ERR",
                                           "IBV_WC_REM_ACCESS_ERR",
                                           "IBV_WC_REM_OP_ERR",
                                           "IBV_WC_RETRY_EXC_ERR",
                                           "IBV_WC_RNR_RETRY_EXC_ERR",
                                           "IBV_WC_LOC_RDD_VIOL_ERR",
                                           "IBV_WC_REM_INV_RD_REQ_ERR",
                                           "IBV_WC_REM_ABORT_ERR",
                                           "IBV_WC_INV_EECN_ERR",
                                           "IBV_WC_INV_EEC_STATE_ERR",
                                           "IBV_WC_FATAL_ERR",
                                           "IBV_WC_RESP_TIMEOUT_ERR",
                                           "IBV_WC_GENERAL_ERR",
                                           "IBV_WC_TM_ERR",
                                           "IBV_WC_TM_RNDV_INCOMPLETE"};
  const auto i = static_cast<size_t>(s);
  return i < std::size(kNames) ? kNames[i] : "IBV_WC_GENERAL_ERR";
}

ibv_wr_opcode wr_opcode(WorkloadKind k) {
  switch (k) {
    case WorkloadKind::send_imm:
      return IBV_WR_SEND_WITH_IMM;
    case WorkloadKind::rdma_write:
      return IBV_WR_RDMA_WRITE;
    case WorkloadKind::rdma_write_imm:
      return IBV_WR_RDMA_WRITE_WITH_IMM;
    case WorkloadKind::rdma_read:
      return IBV_WR_RDMA_READ;
    case WorkloadKind::atomic_cas:
      return IBV_WR_ATOMIC_CMP_AND_SWP;
    case WorkloadKind::atomic_fadd:
      return IBV_WR_ATOMIC_FETCH_AND_ADD;
    default:
      return IBV_WR_SEND;
  }
}

constexpr uint32_t kQkey = 0x11111111;
constexpr uint32_t kMaxRecvDepth = 512;

void check(int rc, const char* what) {
  if (rc != 0) throw std::logic_error(std::string("verbs call failed: ") + what + ": " + std::strerror(rc));
}

}  // namespace

void Flow::count(const ibv_wc& wc) { ++stats_.completions[status_name(wc.status)]; }

void Flow::make_side(Side& s, Host& h) {
  verbs::Device& d = h.device();
  s.host = &h;
  // A region has at least one byte, even for zero-length messages.
  const uint64_t len = std::max<uint64_t>(1, slots_ * msg_size());
  const uint64_t rlen = std::max<uint64_t>(1, rdepth_ * recv_slot_len());
  if (!here(s)) {  // its rank makes it: here only the numbers, in the same order
    s.qpn = d.skip_qp();
    s.buf = h.memory().skip(len);
    s.rkey = d.skip_mr();
    s.rbuf = h.memory().skip(rlen);
    d.skip_mr();
    s.psn = static_cast<uint32_t>(rng_.next() & 0xFFFFFF);
    return;
  }
  s.pd = d.alloc_pd();
  const int depth = static_cast<int>(std::max<uint64_t>(w_.outstanding, 1) + rdepth_ + 4);
  s.scq = d.create_cq(depth);
  s.rcq = d.create_cq(depth);
  verbs::QpInitAttr init;
  init.send_cq = s.scq;
  init.recv_cq = s.rcq;
  init.qp_type = w_.qp == QpType::rc ? IBV_QPT_RC : w_.qp == QpType::uc ? IBV_QPT_UC : IBV_QPT_UD;
  init.cap.max_send_wr = std::max<uint32_t>(w_.outstanding, 1) + 1;
  init.cap.max_recv_wr = static_cast<uint32_t>(rdepth_) + 1;
  init.cap.max_inline_data = std::min<uint32_t>(w_.inline_threshold, h.nic().config().max_inline);
  s.qp = d.create_qp(s.pd, init);
  if (!s.qp)
    throw InputError(std::string("ibv_create_qp failed on ") + h.name() + ": " + std::strerror(errno));
  s.buf = computed_ ? h.memory().allocate_computed(len, *computed_) : h.memory().allocate(len);
  const int access =
      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
  s.mr = d.reg_mr(s.pd, s.buf, len, access);
  // Receive buffers hold the data buffer's layout only for a single
  // message (a flow's SEND); a WRITE with immediate puts no bytes there.
  s.rbuf =
      computed_ && rlen == len ? h.memory().allocate_computed(rlen, *computed_) : h.memory().allocate(rlen);
  s.rmr = d.reg_mr(s.pd, s.rbuf, rlen, IBV_ACCESS_LOCAL_WRITE);
  if (!s.mr || !s.rmr) throw std::logic_error("ibv_reg_mr failed");
  s.qpn = s.qp->qp_num();
  s.rkey = s.mr->rkey;
  s.psn = static_cast<uint32_t>(rng_.next() & 0xFFFFFF);
}

void Flow::connect(Side& s, const Side& peer) {
  const ibv_ah_attr ah = env_.address(*s.host, *peer.host);
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = 1;
  if (w_.qp == QpType::ud) {
    a.qkey = kQkey;
    check(s.qp->modify(a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY), "INIT");
    a.qp_state = IBV_QPS_RTR;
    check(s.qp->modify(a, IBV_QP_STATE), "RTR");
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = s.psn;
    check(s.qp->modify(a, IBV_QP_STATE | IBV_QP_SQ_PSN), "RTS");
    s.ah = s.host->device().create_ah(s.pd, ah);
    return;
  }
  a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                      (w_.qp == QpType::rc ? IBV_ACCESS_REMOTE_ATOMIC : 0);
  check(s.qp->modify(a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), "INIT");
  a = {};
  a.qp_state = IBV_QPS_RTR;
  a.ah_attr = ah;
  a.path_mtu = mtu_enum(env_.mtu);
  a.dest_qp_num = peer.qpn;
  a.rq_psn = peer.psn;
  a.max_dest_rd_atomic = 16;
  a.min_rnr_timer = w_.min_rnr_timer;
  int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
  if (w_.qp == QpType::rc) mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  check(s.qp->modify(a, mask), "RTR");
  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = s.psn;
  a.timeout = w_.timeout;
  a.retry_cnt = w_.retry_cnt;
  a.rnr_retry = w_.rnr_retry;
  a.max_rd_atomic = 16;
  mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
  if (w_.qp == QpType::rc)
    mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
  check(s.qp->modify(a, mask), "RTS");
}

void Flow::setup() {
  slots_ = std::max<uint64_t>(1, std::min<uint64_t>(count_, std::max<uint32_t>(w_.outstanding, 1)));
  if (pingpong_ && op_ == WorkloadKind::rdma_write) slots_ = 2;  // kPostSlot and kPollSlot
  // Receive buffers only where messages consume them, deep enough to stay
  // ahead of the sender's outstanding SENDs.
  const bool receives = pingpong_ || needs_receiver();
  rdepth_ = receives ? std::clamp<uint64_t>(std::min<uint64_t>(count_, 2ull * w_.outstanding + 16), 1,
                                            kMaxRecvDepth)
                     : 1;
  // An IBA packet's payload starts at a multiple of the path MTU, so a
  // stride of one MTU stamps each packet once, at its start. A TCP
  // segment (iwarp) starts anywhere: every 256 bytes, as before.
  stamp_ = std::max<uint64_t>(PayloadPattern::kRecord,
                              fabric_of(env_.cfg).iba_mtu() ? std::bit_floor(env_.mtu) : 256);
  // The loader allows `payload: pattern` only where a slot's bytes are all
  // the flow writes there: RC WRITEs and READs, and a flow's one message.
  if (w_.computed_payload && w_.qp == QpType::rc && msg_size() > 0 && !pingpong_)
    computed_.emplace(pattern_, message_id(0), slots_, msg_size(), stamp_);
  // Each side is set up as its host (core/engine.hpp: contexts): what it
  // schedules (iWARP's TCP handshake) is that host's.
  Simulator& sim = env_.sim;
  {
    Simulator::Scope as(sim, a_.context());
    make_side(sa_, a_);
  }
  {
    Simulator::Scope as(sim, b_.context());
    make_side(sb_, b_);
  }
  if (here(sa_)) pa_ = &a_.spawn(w_.name + (pingpong_ ? " ping" : " sender"));
  if ((pingpong_ || (needs_receiver() && w_.post_recvs)) && here(sb_))
    pb_ = &b_.spawn(w_.name + (pingpong_ ? " pong" : " receiver"));
  if (here(sa_)) {
    Simulator::Scope as(sim, a_.context());
    connect(sa_, sb_);
  }
  if (here(sb_)) {
    Simulator::Scope as(sim, b_.context());
    connect(sb_, sa_);
  }
  if (unacknowledged_write() && here(sb_))
    sb_.qp->on_message_placed([this] {
      landed_ = true;
      if (on_landed_) on_landed_();
    });
  if (is_atomic_op() && here(sb_)) {  // the remote operand starts at 0
    auto target = sb_.host->memory().view(sb_.buf, 8);
    std::memset(target.data(), 0, 8);
  }
  // When each work request in flight was posted, by wr_id modulo the
  // window: a QP completes in order, so k's entry is read before k + window
  // is posted. Nothing is kept per message (a count may be 2^64 - 1).
  posted_at_.assign(pingpong_ ? 0 : std::max<uint32_t>(w_.outstanding, 1), Time{});
}

void Flow::post_recv(Side& s, uint64_t k) {
  const uint64_t slot = k % rdepth_;
  ibv_sge sge{s.rbuf + slot * recv_slot_len(), recv_slot_len(), s.rmr->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = k;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  check(s.qp->post_recv(&wr, &bad), "ibv_post_recv");
}

// Every message's bytes are its own (the pattern names the message), written
// into its slot just before it goes out, so that setting up costs no memory
// and a message lost, misplaced or repeated shows: each placement is checked
// at the sender's completion (placed) or the receiver's (receiver).
// A slot's first message is the whole pattern; a later one through the same
// slot rewrites only one record in every stamp_ bytes (setup()), naming
// itself: every packet carries its message's number, and a 4 KiB-MTU packet
// costs one 32-byte record instead of 128.
void Flow::fill_message(uint64_t k, uint64_t slot) {
  // The receiver's buffer on another rank: a READ's source, or computed
  // (its writes are checked against the message each slot holds).
  if (remote_ && (computed_ || op_ == WorkloadKind::rdma_read) && !env_.sim.runs(b_.context()))
    remote_(Remote::posted, k);
  if (computed_) {  // the buffer computes the message from the one its slot holds
    computed_->put(k);
    return;
  }
  const Side& src = op_ == WorkloadKind::rdma_read ? sb_ : sa_;
  if (!env_.sim.runs(src.host->context())) return;  // its rank writes it (Remote::posted)
  const uint64_t size = msg_size();
  const std::span<std::byte> bytes = src.host->memory().view(src.buf + slot * size, size);
  if (k < slots_) {
    pattern_.fill(message_id(k), 0, bytes);
    return;
  }
  for (uint64_t off = 0; off < size; off += stamp_)
    pattern_.fill(message_id(k), off,
                  bytes.subspan(off, std::min<uint64_t>(PayloadPattern::kRecord, size - off)));
}

bool Flow::stamped(uint64_t k, std::span<const std::byte> bytes) const {
  for (uint64_t off = 0; off < bytes.size(); off += stamp_)
    if (!pattern_.matches(
            message_id(k), off,
            bytes.subspan(off, std::min<uint64_t>(PayloadPattern::kRecord, bytes.size() - off))))
      return false;
  return true;
}

// RC completes in order and a slot is reused only after its message
// completed, so at k's completion its slot on the far side still holds k:
// every packet's stamp names k (the rest is compared at the end, result()).
bool Flow::placed(uint64_t k) {
  const uint64_t size = msg_size();
  const Side& dst = op_ == WorkloadKind::rdma_read ? sa_ : sb_;
  if (!env_.sim.runs(dst.host->context())) {  // split run: the receiver's rank checks
    if (remote_) remote_(Remote::placed, k);  // (FlowsRun: at the flow's end)
    return true;
  }
  if (computed_) return computed_intact(dst, dst.buf, (k + 1) * size);  // messages up to k landed
  return stamped(k, dst.host->memory().view(dst.buf + (k % slots_) * size, size));
}

// A signaled work request of one scatter-gather element.
static ibv_send_wr signaled_wr(uint64_t id, ibv_sge& sge, ibv_wr_opcode opcode) {
  ibv_send_wr wr{};
  wr.wr_id = id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = opcode;
  wr.send_flags = IBV_SEND_SIGNALED;
  return wr;
}

int Flow::post_op(uint64_t k) {
  const uint64_t slot = k % slots_;
  const uint64_t size = msg_size();
  if (!is_atomic_op()) fill_message(k, slot);
  ibv_sge sge{sa_.buf + slot * size, static_cast<uint32_t>(size), sa_.mr->lkey};
  ibv_send_wr wr = signaled_wr(k, sge, wr_opcode(op_));
  // With CQ moderation one in cq_moderation is signalled, and the last
  // (perftest's run_iter_bw), so the program learns when all have completed.
  const uint64_t mod = std::max<uint32_t>(w_.cq_moderation, 1);
  if (k % mod != mod - 1 && k != count_ - 1) wr.send_flags &= ~IBV_SEND_SIGNALED;
  if (inline_bytes()) wr.send_flags |= IBV_SEND_INLINE;
  wr.imm_data = htonl(static_cast<uint32_t>(k));
  const uint32_t rkey = w_.bad_rkey ? sb_.rkey ^ 0x5A5A00 : sb_.rkey;
  if (is_atomic_op()) {
    wr.wr.atomic.remote_addr = sb_.buf;
    wr.wr.atomic.rkey = rkey;
    // fetch-and-add adds `add`; compare-and-swap compares with `compare` and swaps in `swap`.
    wr.wr.atomic.compare_add = w_.compare_add;
    wr.wr.atomic.swap = w_.swap;
  } else if (w_.qp == QpType::ud) {
    wr.wr.ud.ah = sa_.ah;
    wr.wr.ud.remote_qpn = sb_.qpn;
    wr.wr.ud.remote_qkey = kQkey;
  } else {
    wr.wr.rdma.remote_addr = sb_.buf + slot * size;
    wr.wr.rdma.rkey = rkey;
  }
  ibv_send_wr* bad = nullptr;
  return sa_.qp->post_send(&wr, &bad);
}

Task Flow::sender(Time t0) {
  Simulator& sim = env_.sim;
  co_await sleep_until(sim, t0);
  // done: work requests completed, in order (RC and UC complete in order, and
  // an unsignalled one completes with the next signalled one, IBA 10.8.3);
  // posted - done are in flight.
  uint64_t posted = 0, done = 0;
  bool failed = false;
  const bool perftest = is_perftest(w_.kind);
  stats_.start = sim.now();
  std::vector<ibv_wc> wcs(16);
  auto completed = [&](uint64_t k) {
    ++stats_.completions["IBV_WC_SUCCESS"];
    const bool one_sided = op_ == WorkloadKind::rdma_write || op_ == WorkloadKind::rdma_write_imm ||
                           op_ == WorkloadKind::rdma_read;
    if (one_sided && w_.qp == QpType::rc && !placed(k)) stats_.data_verified = false;
    ++stats_.ops;
    stats_.bytes += msg_size();
    stats_.latency_ps.push_back((sim.now() - posted_at_[k % posted_at_.size()]).count());
    stats_.end = sim.now();
  };
  while (done < count_) {
    while (!failed && posted - done < std::max<uint32_t>(w_.outstanding, 1) && posted < count_) {
      posted_at_[posted % posted_at_.size()] = sim.now();
      if (perftest) stats_.posted_ps.push_back(sim.now().count());
      co_await a_.post(*pa_, inline_bytes());
      if (post_op(posted) != 0) {
        failed = true;
        all_ok_ = false;
        break;
      }
      posted_ = ++posted;
    }
    if (posted == done) break;
    co_await a_.wait(*pa_, *sa_.scq);
    const int n = sa_.scq->poll(static_cast<int>(wcs.size()), wcs.data());
    for (int i = 0; i < n; ++i) {
      const ibv_wc& wc = wcs[i];
      // The unsignalled work requests before this one completed with it.
      for (; done < wc.wr_id; ++done) completed(done);
      if (wc.status == IBV_WC_SUCCESS) {
        completed(done);
        if (perftest) stats_.completed_ps.emplace_back(done, sim.now().count());
      } else {
        count(wc);
        failed = true;
        all_ok_ = false;
      }
      ++done;
    }
  }
  if (stats_.end < stats_.start) stats_.end = stats_.start;
  program_ended();
}

Task Flow::receiver(Time t0) {
  Simulator& sim = env_.sim;
  uint64_t posted = 0;
  for (; posted < rdepth_; ++posted) post_recv(sb_, posted);
  co_await sleep_until(sim, t0);
  std::vector<ibv_wc> wcs(16);
  SlotPattern sent = sent_slots();
  while (received_ < count_) {
    co_await b_.wait(*pb_, *sb_.rcq);
    const int n = sb_.rcq->poll(static_cast<int>(wcs.size()), wcs.data());
    bool dead = false;
    for (int i = 0; i < n; ++i) {
      const ibv_wc& wc = wcs[i];
      if (wc.status != IBV_WC_SUCCESS) {
        ++stats_.recv_completions[status_name(wc.status)];
        all_ok_ = false;
        dead = true;
        continue;
      }
      // The message that landed in this receive buffer must equal what the
      // sender sent for it (received_ counts messages in order).
      if (op_ != WorkloadKind::rdma_write_imm) {
        const uint64_t len = msg_size();
        const uint32_t off = w_.qp == QpType::ud ? kGrhLen : 0;
        bool same = wc.byte_len == len + off;
        if (computed_) {  // checked as it was written
          same = same && computed_intact(sb_, sb_.rbuf, size_);
        } else {
          // What the sender's slot held for it: its stamps name it, between
          // them the slot's first message (fill_message). Computed, not read
          // from the sender's memory, which a split run holds on another rank.
          auto got = b_.memory().view(sb_.rbuf + (wc.wr_id % rdepth_) * recv_slot_len() + off, len);
          sent.put(received_);
          same = same && sent.matches((received_ % slots_) * len, got);
        }
        if (!same) stats_.data_verified = false;
      }
      if (wc.wc_flags & IBV_WC_WITH_IMM) {
        if (ntohl(wc.imm_data) != static_cast<uint32_t>(received_)) stats_.data_verified = false;
      }
      ++received_;
      if (posted < count_) post_recv(sb_, posted++);
    }
    if (dead) break;
  }
  program_ended();
}

// Ping-pong of SENDs: a sends, b answers, a measures half the round trip.
Task Flow::ping(Time t0) {
  Simulator& sim = env_.sim;
  post_recv(sa_, 0);
  co_await sleep_until(sim, t0);
  stats_.start = sim.now();
  std::vector<ibv_wc> wcs(4);
  for (uint64_t k = 0; k < count_; ++k) {
    const Time t = sim.now();
    if (is_perftest(w_.kind)) stats_.posted_ps.push_back(t.count());
    co_await a_.post(*pa_, inline_bytes());
    if (post_op(k) != 0) {
      all_ok_ = false;
      break;
    }
    bool sent = false, back = false, failed = false;
    while (!(sent && back) && !failed) {
      if (!sent) {
        co_await a_.wait(*pa_, *sa_.scq);
        const int n = sa_.scq->poll(1, wcs.data());
        if (n == 1) {
          count(wcs[0]);
          sent = true;
          failed = wcs[0].status != IBV_WC_SUCCESS;
        }
      } else {
        co_await a_.wait(*pa_, *sa_.rcq);
        const int n = sa_.rcq->poll(1, wcs.data());
        if (n == 1) {
          back = true;
          failed = wcs[0].status != IBV_WC_SUCCESS;
        }
      }
    }
    if (failed) {
      all_ok_ = false;
      break;
    }
    post_recv(sa_, k + 1);
    ++stats_.ops;
    stats_.bytes += msg_size();
    stats_.latency_ps.push_back((sim.now() - t).count() / 2);
    stats_.end = sim.now();
  }
  program_ended();
}

Task Flow::pong(Time t0) {
  Simulator& sim = env_.sim;
  post_recv(sb_, 0);
  co_await sleep_until(sim, t0);
  std::vector<ibv_wc> wcs(4);
  SlotPattern sent = sent_slots();
  for (uint64_t k = 0; k < count_; ++k) {
    co_await b_.wait(*pb_, *sb_.rcq);
    if (sb_.rcq->poll(1, wcs.data()) != 1) {
      --k;
      continue;
    }
    if (wcs[0].status != IBV_WC_SUCCESS) break;
    post_recv(sb_, k + 1);
    // Answer with the same bytes from b's own buffer (what it just received),
    // compared with the ping's slot of message k as it is now (post_op:
    // slot k % slots_; computed, as the receiver does).
    // A UD receive buffer starts with the 40-byte GRH (IBA 11.4.1.1), the
    // message after it: that is what is compared and echoed.
    const uint64_t len = msg_size();
    const uint64_t at = sb_.rbuf + (k % rdepth_) * recv_slot_len() + (w_.qp == QpType::ud ? kGrhLen : 0);
    auto got = b_.memory().view(at, len);
    sent.put(k);
    if (!sent.matches((k % slots_) * len, got)) stats_.data_verified = false;
    ibv_sge sge{at, static_cast<uint32_t>(len), sb_.rmr->lkey};
    ibv_send_wr wr = signaled_wr(k, sge, IBV_WR_SEND);
    if (w_.qp == QpType::ud) {
      wr.wr.ud.ah = sb_.ah;
      wr.wr.ud.remote_qpn = sa_.qpn;
      wr.wr.ud.remote_qkey = kQkey;
    }
    co_await b_.post(*pb_, 0);
    ibv_send_wr* bad = nullptr;
    if (sb_.qp->post_send(&wr, &bad) != 0) break;
    co_await b_.wait(*pb_, *sb_.scq);
    sb_.scq->poll(1, wcs.data());
  }
  program_ended();
}

// The slot a WRITE ping-pong side posts from and the one its peer writes
// into: perftest keeps them apart so a side's own marker never reads as the
// peer's.
constexpr uint64_t kPostSlot = 0, kPollSlot = 1;

int Flow::post_write_to_peer(Side& self, const Side& peer, uint64_t from_slot, uint64_t k) {
  const uint64_t size = msg_size();
  ibv_sge sge{self.buf + from_slot * size, static_cast<uint32_t>(size), self.mr->lkey};
  ibv_send_wr wr = signaled_wr(k, sge, IBV_WR_RDMA_WRITE);
  if (inline_bytes()) wr.send_flags |= IBV_SEND_INLINE;
  wr.wr.rdma.remote_addr = peer.buf + kPollSlot * size;
  wr.wr.rdma.rkey = peer.rkey;
  ibv_send_wr* bad = nullptr;
  return self.qp->post_send(&wr, &bad);
}

// Takes what send completions there are without waiting; false on an error.
bool Flow::reap_send_completions(Side& self, uint64_t& completed) {
  ibv_wc wc[4];
  for (int n; (n = self.scq->poll(4, wc)) > 0;)
    for (int i = 0; i < n; ++i) {
      ++completed;
      if (&self == &sa_) count(wc[i]);
      if (wc[i].status != IBV_WC_SUCCESS) return false;
    }
  return true;
}

Task Flow::write_ping(Time t0, Side& self, Side& peer, Process& p, bool first) {
  Simulator& sim = env_.sim;
  Host& h = *self.host;
  const uint64_t size = msg_size();
  // The buffers stay where they are for the run: look them up once, not per poll.
  auto slot = [&](Side& s, uint64_t i) { return s.host->memory().view(s.buf + i * size, size); };
  const std::span<std::byte> own_post = slot(self, kPostSlot), own_poll = slot(self, kPollSlot),
                             peer_post = slot(peer, kPostSlot);
  uint64_t posted = 0, completed = 0;
  co_await sleep_until(sim, t0);
  if (first) stats_.start = sim.now();
  for (uint64_t k = 0; k < count_ && !aborted_; ++k) {
    const auto marker = static_cast<std::byte>((k + 1) & 0xff);  // never the slot's previous value
    const Time t = sim.now();
    if (first) {  // a: message k out
      stats_.posted_ps.push_back(t.count());
      fill_message(k, kPostSlot);
      own_post[size - 1] = marker;
      co_await h.post(p, inline_bytes());
      if (post_write_to_peer(self, peer, kPostSlot, k) != 0) break;
      ++posted;
    }
    // Busy-poll the last byte of the slot the peer writes (perftest's
    // `while (*poll_buf != scnt)`), reaping send completions meanwhile.
    while (own_poll[size - 1] != marker && !aborted_) {
      co_await h.cpu().run(p, CpuUse::poll, h.config().poll_cost);
      if (!reap_send_completions(self, completed)) aborted_ = true;
    }
    if (aborted_) break;
    if (first) {  // a: back as sent, half the round trip
      if (std::memcmp(own_poll.data(), own_post.data(), size) != 0) stats_.data_verified = false;
      ++stats_.ops;
      stats_.bytes += size;
      stats_.latency_ps.push_back((sim.now() - t).count() / 2);
      stats_.end = sim.now();
    } else {  // b: the bytes a sent, sent back
      if (std::memcmp(own_poll.data(), peer_post.data(), size) != 0) stats_.data_verified = false;
      co_await h.post(p, inline_bytes());
      if (post_write_to_peer(self, peer, kPollSlot, k) != 0) break;
      ++posted;
    }
  }
  // The last writes' completions, so every CQE is counted.
  while (completed < posted && !aborted_) {
    co_await h.wait(p, *self.scq);
    if (!reap_send_completions(self, completed)) aborted_ = true;
  }
  if (aborted_ || posted < count_) {
    aborted_ = true;  // the peer stops polling for what will not come
    all_ok_ = false;
  }
  program_ended();
}

void Flow::remote(Remote what, uint64_t k) {
  if (what == Remote::posted) {
    fill_message(k, k % slots_);
  } else if (!placed(k)) {
    stats_.data_verified = false;
  }
}

Flow::Part Flow::part() const {
  Part p;
  p.stats = stats_;
  for (const Side* side : {&sa_, &sb_})
    if (side->qp && env_.sim.runs(side->host->context()))
      p.stats.retransmitted_packets += side->qp->retransmitted_packets();
  p.all_ok = all_ok_;
  p.ended = finished_here();
  p.held = ends_hold();
  p.held_so_far = ends_hold_so_far();
  p.received = received_;
  return p;
}

void Flow::Part::merge(const Part& p) {
  stats.merge(p.stats);
  all_ok = all_ok && p.all_ok;
  ended = ended && p.ended;
  held = held && p.held;
  held_so_far = held_so_far && p.held_so_far;
  received += p.received;
}

bool Flow::holds_all_sent(const Side& s) const {
  if (msg_size() == 0) return true;  // zero-length messages leave nothing behind
  // Nothing ever landed (a flow that never ran): reading would only bring
  // in zero pages, a page a pair for an all_to_all stopped at once.
  if (s.host->memory().resident_bytes(s.buf, slots_ * msg_size()) == 0) return count_ == 0;
  SlotPattern sent = sent_slots();
  for (uint64_t k = count_ - std::min(count_, slots_); k < count_; ++k) sent.put(k);
  return sent.matches(0, s.host->memory().view(s.buf, slots_ * msg_size()));
}

// What the buffers hold once every message completed, checked where they
// are: a WRITE's receiver, a READ's requester, the atomics' operand. Only
// what conclude() looks at, and only ends this engine runs.
bool Flow::ends_hold() const {
  const bool a_here = env_.sim.runs(a_.context()), b_here = env_.sim.runs(b_.context());
  if (pingpong_) return true;  // checked as each message arrived
  if (op_ == WorkloadKind::rdma_write || op_ == WorkloadKind::rdma_write_imm) {
    if (!b_here) return true;
    return computed_ ? computed_intact(sb_, sb_.buf, count_ * msg_size()) : holds_all_sent(sb_);
  }
  if (op_ == WorkloadKind::rdma_read) {
    if (!a_here) return true;
    return computed_ ? computed_intact(sa_, sa_.buf, count_ * msg_size()) : holds_all_sent(sa_);
  }
  if (is_atomic_op() && b_here) {
    uint64_t v;
    std::memcpy(&v, b_.memory().view(sb_.buf, 8).data(), 8);
    return v == atomic_operand(count_);
  }
  return true;
}

uint64_t Flow::atomic_operand(uint64_t n) const {
  // The remote operand started at 0; replay the operations in order.
  uint64_t v = 0;
  for (uint64_t i = 0; i < n; ++i) {
    if (op_ == WorkloadKind::atomic_fadd)
      v += w_.compare_add;
    else if (v == w_.compare_add)
      v = w_.swap;
  }
  return v;
}

bool Flow::ends_hold_so_far() const {
  const bool a_here = env_.sim.runs(a_.context()), b_here = env_.sim.runs(b_.context());
  if (pingpong_ || !a_here) return true;  // a ping-pong checks each message as it arrives
  const uint64_t done = stats_.ops;
  if ((op_ == WorkloadKind::rdma_write || op_ == WorkloadKind::rdma_write_imm) && b_here)
    return computed_ ? computed_intact(sb_, sb_.buf, done * msg_size()) : holds_completed(sb_, done);
  if (op_ == WorkloadKind::rdma_read)
    return computed_ ? computed_intact(sa_, sa_.buf, done * msg_size()) : holds_completed(sa_, done);
  if (is_atomic_op() && b_here) {
    // Operations in flight may have run at the responder before the cut-off.
    uint64_t v;
    std::memcpy(&v, b_.memory().view(sb_.buf, 8).data(), 8);
    for (uint64_t n = done; n <= posted_; ++n)
      if (v == atomic_operand(n)) return true;
    return false;
  }
  return true;
}

bool Flow::holds_completed(const Side& s, uint64_t done) const {
  const uint64_t size = msg_size();
  if (done == 0 || size == 0) return true;
  SlotPattern sent = sent_slots();
  for (uint64_t slot = 0; slot < std::min(posted_, slots_); ++slot) {
    // The last message posted into the slot.
    const uint64_t last = slot + (posted_ - 1 - slot) / slots_ * slots_;
    const std::span<const std::byte> bytes = s.host->memory().view(s.buf + slot * size, size);
    if (last < done) {  // completed: all its bytes
      sent.put(last);
      if (!sent.matches(slot * size, bytes)) return false;
      continue;
    }
    if (last < slots_) continue;  // the slot's first message, in flight: nothing completed there
    // A message in flight over a completed one: its stamps were checked
    // at completion (placed()); the bytes between them are the slot's own.
    for (uint64_t off = 0; off < size; off += stamp_) {
      const uint64_t from = off + PayloadPattern::kRecord, to = std::min(off + stamp_, size);
      if (from < to && !sent.matches(slot * size + from, bytes.subspan(from, to - from))) return false;
    }
  }
  return true;
}

FlowStats Flow::conclude(const Part& whole) const {
  FlowStats s = whole.stats;
  s.finished = whole.ended;
  s.planned_ops = count_;
  s.data_mismatch = !whole.stats.data_verified;  // the receiver saw wrong bytes land
  s.undelivered_bytes = (count_ - std::min(count_, s.ops)) * msg_size();
  if (!whole.all_ok) {  // a program failed: not all delivered, nothing more to compare
    s.data_verified = false;
    return s;
  }
  if (s.ops < count_) {  // cut off by stop: what completed is checked, the rest is undelivered
    // A UC WRITE completes when sent, not when it lands: which of those
    // landed cannot be told, so nothing is verified.
    if ((op_ == WorkloadKind::rdma_write || op_ == WorkloadKind::rdma_write_imm) && w_.qp != QpType::rc &&
        !pingpong_) {
      s.data_verified = false;
      return s;
    }
    s.data_verified = s.data_verified && whole.held_so_far;
    s.data_mismatch = s.data_mismatch || !s.data_verified;
    return s;
  }
  // A UC WRITE that has not landed (in flight, or a packet lost: the
  // message is dropped, IBA 9.8.3) was not delivered; its bytes are not wrong.
  if (unacknowledged_write() && !landed_) {
    s.data_verified = false;
    return s;
  }
  if (!pingpong_ && (op_ == WorkloadKind::send || op_ == WorkloadKind::send_imm)) {
    s.data_verified = s.data_verified && whole.received == count_;
    return s;
  }
  s.data_verified = s.data_verified && whole.held;
  s.data_mismatch = s.data_mismatch || !s.data_verified;
  return s;
}

bool Flow::placed_correctly() const {
  const Side& dst = op_ == WorkloadKind::rdma_read ? sa_ : sb_;
  if (!env_.sim.runs(dst.host->context())) return true;  // split run: its rank checks (FlowsRun)
  const uint64_t off =
      op_ == WorkloadKind::send || op_ == WorkloadKind::send_imm ? (w_.qp == QpType::ud ? kGrhLen : 0) : 0;
  const uint64_t buf = needs_receiver() && op_ != WorkloadKind::rdma_write_imm ? dst.rbuf + off : dst.buf;
  if (computed_) return computed_intact(dst, buf, size_);
  return pattern_.matches(message_id(0), 0, dst.host->memory().view(buf, size_));
}

bool Flow::computed_intact(const Side& s, uint64_t buf, uint64_t need) const {
  // Zero-length messages write nothing: nothing to check (and their empty
  // buffer shares its address with the next one, which is not theirs).
  if (need == 0) return true;
  const ComputedBuffer* c = s.host->memory().computed(buf);
  return c && c->wrong_writes == 0 && c->written_bytes >= need;
}

void Flow::release_buffers() {
  for (const Side* s : {&sa_, &sb_}) {
    if (s == &sb_ && lands_later()) continue;  // still to land: checked then
    s->host->memory().release(s->buf);
    s->host->memory().release(s->rbuf);
  }
}

// ------------------------------------------------------------------ WorkloadRun

void FlowStats::merge(const FlowStats& s) {
  ops += s.ops;
  bytes += s.bytes;
  for (const auto& [k, v] : s.completions) completions[k] += v;
  for (const auto& [k, v] : s.recv_completions) recv_completions[k] += v;
  start = std::min(start, s.start);
  end = std::max(end, s.end);
  latency_ps.insert(latency_ps.end(), s.latency_ps.begin(), s.latency_ps.end());
  posted_ps.insert(posted_ps.end(), s.posted_ps.begin(), s.posted_ps.end());
  completed_ps.insert(completed_ps.end(), s.completed_ps.begin(), s.completed_ps.end());
  data_verified = data_verified && s.data_verified;
  data_mismatch = data_mismatch || s.data_mismatch;
  finished = finished && s.finished;
  planned_ops += s.planned_ops;
  undelivered_bytes += s.undelivered_bytes;
  retransmitted_packets += s.retransmitted_packets;
}

FlowStats WorkloadRun::result_of(const std::vector<FlowStats>& flows) const {
  FlowStats all;
  all.start = Time::max();
  all.finished = true;
  for (const FlowStats& f : flows) all.merge(f);
  if (flows.empty() || all.start == Time::max()) all.start = Time{};
  return all;
}

}  // namespace rdmasim
