#include "nodes/host/verbs.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/task.hpp"
#include "nodes/host/memory.hpp"
#include "nodes/host/rnic.hpp"

namespace rdmasim::verbs {

namespace {

// Device limits a program may query (ibv_query_device would report them).
constexpr uint32_t kMaxQpWr = 16384;
constexpr uint32_t kMaxSge = 16;
constexpr uint32_t kMaxCqe = 1 << 20;
constexpr uint8_t kMaxRdAtomic = 16;
constexpr uint64_t kMaxMessage = 1ull << 31;  // IBA: 2^31 bytes a message

// Required and optional attributes per QP transition, as the Linux verbs
// core (ib_modify_qp_is_ok) checks them, per transport type.
struct Transition {
  int required[3];  // RC, UC, UD
  int optional[3];
};

int type_index(ibv_qp_type t) { return t == IBV_QPT_RC ? 0 : t == IBV_QPT_UC ? 1 : 2; }

const Transition* transition(ibv_qp_type type, ibv_qp_state from, ibv_qp_state to) {
  static constexpr int kInitAttrs = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
  static constexpr int kInitUd = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
  static const Transition reset_init{{kInitAttrs, kInitAttrs, kInitUd}, {0, 0, 0}};
  static const Transition init_init{{0, 0, 0}, {kInitAttrs, kInitAttrs, kInitUd}};
  static const Transition init_rtr{
      {IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
           IBV_QP_MIN_RNR_TIMER,
       IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN, 0},
      {IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX,
       IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX, IBV_QP_PKEY_INDEX | IBV_QP_QKEY}};
  static const Transition rtr_rts{
      {IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC,
       IBV_QP_SQ_PSN, IBV_QP_SQ_PSN},
      {IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER |
           IBV_QP_PATH_MIG_STATE,
       IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PATH_MIG_STATE,
       IBV_QP_CUR_STATE | IBV_QP_QKEY}};
  static const Transition rts_rts{
      {0, 0, 0},
      {IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE |
           IBV_QP_MIN_RNR_TIMER,
       IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE,
       IBV_QP_CUR_STATE | IBV_QP_QKEY}};
  // The send queue drain (SQD) and send queue error (SQE) states (IBA 10.3.1, figure 130).
  static const Transition rts_sqd{
      {0, 0, 0}, {IBV_QP_EN_SQD_ASYNC_NOTIFY, IBV_QP_EN_SQD_ASYNC_NOTIFY, IBV_QP_EN_SQD_ASYNC_NOTIFY}};
  static const Transition sqd_rts{rts_rts};
  static const Transition sqd_sqd{
      {0, 0, 0},
      {IBV_QP_PORT | IBV_QP_AV | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
           IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
           IBV_QP_PKEY_INDEX | IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE,
       IBV_QP_AV | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_PATH_MIG_STATE,
       IBV_QP_PKEY_INDEX | IBV_QP_QKEY}};
  static const Transition sqe_rts{
      {0, 0, 0}, {0, IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS, IBV_QP_CUR_STATE | IBV_QP_QKEY}};
  static const Transition to_reset_or_err{{0, 0, 0}, {0, 0, 0}};
  if (to == IBV_QPS_RESET || to == IBV_QPS_ERR) return &to_reset_or_err;
  if (from == IBV_QPS_RESET && to == IBV_QPS_INIT) return &reset_init;
  if (from == IBV_QPS_INIT && to == IBV_QPS_INIT) return &init_init;
  if (from == IBV_QPS_INIT && to == IBV_QPS_RTR) return &init_rtr;
  if (from == IBV_QPS_RTR && to == IBV_QPS_RTS) return &rtr_rts;
  if (from == IBV_QPS_RTS && to == IBV_QPS_RTS) return &rts_rts;
  if (from == IBV_QPS_RTS && to == IBV_QPS_SQD) return &rts_sqd;
  if (from == IBV_QPS_SQD && to == IBV_QPS_RTS) return &sqd_rts;
  if (from == IBV_QPS_SQD && to == IBV_QPS_SQD) return &sqd_sqd;
  // An RC QP never enters SQE (its send errors take it to ERR): no SQE -> RTS.
  if (from == IBV_QPS_SQE && to == IBV_QPS_RTS && type != IBV_QPT_RC) return &sqe_rts;
  return nullptr;
}

}  // namespace

// ------------------------------------------------------------ CompletionQueue

CompletionQueue::~CompletionQueue() {
  device_.sim().cancel(waiter_timeout_);
  device_.sim().cancel(irq_timer_);
  if (waiter_) waiter_.destroy();
  if (irq_waiter_) irq_waiter_.destroy();
}

int CompletionQueue::poll(int n, ibv_wc* wc) {
  int got = 0;
  while (got < n && !ring_.empty()) {
    wc[got++] = ring_.front();
    ring_.pop_front();
  }
  return got;
}

void CompletionQueue::push(const ibv_wc& wc, bool solicited) {
  if (overflow_) return;  // a CQ in error takes no more completions
  if (ring_.size() >= capacity_) {
    overflow_ = true;  // the completion is lost
    device_.cq_overflowed(*this);
    return;
  }
  ring_.push_back(wc);
  if (waiter_) {
    if (waiter_came_) *std::exchange(waiter_came_, nullptr) = true;
    device_.sim().cancel(waiter_timeout_);
    device_.sim().at(device_.sim().now(), detail::ResumeEvent(std::exchange(waiter_, nullptr)));
  }
  if (armed_ && (!solicited_only_ || solicited || wc.status != IBV_WC_SUCCESS)) {
    ++irq_count_;
    if (irq_count_ >= moderation_.frames) {
      fire();
    } else if (irq_count_ == 1) {
      // A moderation delay of 0 with a frame threshold would wait forever on a
      // quiet CQ; NICs bound it, and so do we.
      const Time d = moderation_.delay > Time{} ? moderation_.delay : Time::us(8);
      irq_timer_ = device_.sim().after(d, [this] {
        irq_timer_ = {};
        fire();
      });
    }
  }
}

void CompletionQueue::wait_within(std::coroutine_handle<> h, Time limit, bool& came) {
  waiter_ = h;
  waiter_came_ = &came;
  waiter_timeout_ = device_.sim().after(limit, [this] {
    *std::exchange(waiter_came_, nullptr) = false;
    std::exchange(waiter_, nullptr).resume();
  });
}

int CompletionQueue::req_notify(bool solicited_only) {
  if (!armed_) irq_count_ = 0;
  // Armed for any completion stays so (ibv_req_notify_cq(3)).
  solicited_only_ = armed_ ? solicited_only_ && solicited_only : solicited_only;
  armed_ = true;
  return 0;
}

// The completion event: the CQ disarms; the program hears of it after the interrupt latency.
void CompletionQueue::fire() {
  device_.sim().cancel(irq_timer_);
  irq_timer_ = {};
  irq_count_ = 0;
  armed_ = false;
  ++interrupts_;
  if (irq_waiter_)
    device_.sim().after(moderation_.latency, detail::ResumeEvent(std::exchange(irq_waiter_, nullptr)));
  if (channel_) device_.sim().after(moderation_.latency, [this] { channel_->push(this); });
}

CompletionChannel::CompletionChannel(Device& d) : EventQueue(d.sim()) {}

// ------------------------------------------------------------------ QueuePair

QueuePair::QueuePair(Device& d, ProtectionDomain& pd, uint32_t qpn, const QpInitAttr& init)
    : device_(d), pd_(pd), qpn_(qpn), init_(init) {
  // UD datagrams may be as long as the port's active MTU (no path MTU is set for UD).
  attr_.path_mtu = d.nic().active_mtu();
  attr_.port_num = 1;
}

int QueuePair::modify(const ibv_qp_attr& a, int mask) {
  const ibv_qp_state to = (mask & IBV_QP_STATE) ? a.qp_state : state_;
  const int ti = type_index(type());
  const int given = mask & ~(IBV_QP_STATE | IBV_QP_CUR_STATE);
  auto allowed = [&](ibv_qp_state from) {
    const Transition* t = transition(type(), from, to);
    return t && (given & t->required[ti]) == t->required[ti] &&
           !(given & ~(t->required[ti] | t->optional[ti]));
  };
  // The consumer's RTR -> RTS of a QP its connection already moved to RTS.
  const ibv_qp_state current =
      rts_by_connection_ && !allowed(state_) && (!(mask & IBV_QP_CUR_STATE) || a.cur_qp_state == IBV_QPS_RTR)
          ? IBV_QPS_RTR
          : state_;
  if ((mask & IBV_QP_CUR_STATE) && a.cur_qp_state != current) return EINVAL;
  if (!allowed(current)) return EINVAL;
  const bool send_queue_state = to == IBV_QPS_SQD || state_ == IBV_QPS_SQD || state_ == IBV_QPS_SQE;
  if (send_queue_state && !has_send_queue_states()) return EINVAL;
  // Value checks (IBA 11.2.5.2 ranges).
  if ((mask & IBV_QP_PATH_MTU) && (a.path_mtu < IBV_MTU_256 || a.path_mtu > IBV_MTU_4096)) return EINVAL;
  if ((mask & IBV_QP_PORT) && a.port_num != 1) return EINVAL;
  if ((mask & IBV_QP_PKEY_INDEX) && a.pkey_index != 0) return EINVAL;  // a P_Key table of one entry
  if ((mask & IBV_QP_TIMEOUT) && a.timeout > 31) return EINVAL;
  if ((mask & IBV_QP_RETRY_CNT) && a.retry_cnt > 7) return EINVAL;
  if ((mask & IBV_QP_RNR_RETRY) && a.rnr_retry > 7) return EINVAL;
  if ((mask & IBV_QP_MIN_RNR_TIMER) && a.min_rnr_timer > 31) return EINVAL;
  if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && a.max_rd_atomic > kMaxRdAtomic) return EINVAL;
  if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && a.max_dest_rd_atomic > kMaxRdAtomic) return EINVAL;
  if ((mask & IBV_QP_DEST_QPN) && a.dest_qp_num > 0xFFFFFF) return EINVAL;
  if ((mask & IBV_QP_RQ_PSN) && a.rq_psn > 0xFFFFFF) return EINVAL;
  if ((mask & IBV_QP_SQ_PSN) && a.sq_psn > 0xFFFFFF) return EINVAL;
  // RoCE addresses always carry a GRH (the kernel's ib_resolve_eth_dmac);
  // iwarp connects to the address's GID.
  if ((mask & IBV_QP_AV) && !a.ah_attr.is_global && device_.nic().fabric().connects_by_gid()) return EINVAL;

  if (mask & IBV_QP_PKEY_INDEX) attr_.pkey_index = a.pkey_index;
  if (mask & IBV_QP_PORT) attr_.port_num = a.port_num;
  if (mask & IBV_QP_ACCESS_FLAGS) attr_.qp_access_flags = a.qp_access_flags;
  if (mask & IBV_QP_QKEY) attr_.qkey = a.qkey;
  if (mask & IBV_QP_AV) attr_.ah_attr = a.ah_attr;
  if (mask & IBV_QP_PATH_MTU) attr_.path_mtu = a.path_mtu;
  if (mask & IBV_QP_DEST_QPN) attr_.dest_qp_num = a.dest_qp_num;
  if (mask & IBV_QP_RQ_PSN) attr_.rq_psn = a.rq_psn;
  if (mask & IBV_QP_SQ_PSN) attr_.sq_psn = a.sq_psn;
  if (mask & IBV_QP_MAX_DEST_RD_ATOMIC) attr_.max_dest_rd_atomic = a.max_dest_rd_atomic;
  if (mask & IBV_QP_MAX_QP_RD_ATOMIC) attr_.max_rd_atomic = a.max_rd_atomic;
  if (mask & IBV_QP_MIN_RNR_TIMER) attr_.min_rnr_timer = a.min_rnr_timer;
  if (mask & IBV_QP_TIMEOUT) attr_.timeout = a.timeout;
  if (mask & IBV_QP_RETRY_CNT) attr_.retry_cnt = a.retry_cnt;
  if (mask & IBV_QP_RNR_RETRY) attr_.rnr_retry = a.rnr_retry;
  if (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY) attr_.en_sqd_async_notify = a.en_sqd_async_notify;

  const ibv_qp_state from = current;
  rts_by_connection_ = false;
  if (to == IBV_QPS_ERR && from != IBV_QPS_ERR) {
    enter_error();
    return 0;
  }
  state_ = to;
  if (to == IBV_QPS_RESET) {
    sq_.clear();
    rq_.clear();
  }
  drain_notify_ = to == IBV_QPS_SQD && from == IBV_QPS_RTS && (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY) &&
                  a.en_sqd_async_notify;
  state_changed(from);
  check_drained();
  return 0;
}

// IBA 10.3.1 (SQD): once no WQE started before the drain is outstanding,
// the QP raises IBV_EVENT_SQ_DRAINED if it was asked to, once.
void QueuePair::check_drained() {
  if (!drain_notify_ || state_ != IBV_QPS_SQD || (!sq_.empty() && sq_.front().started)) return;
  drain_notify_ = false;
  device_.raise({IBV_EVENT_SQ_DRAINED, nullptr, this});
}

int QueuePair::check_send(const ibv_send_wr& wr) const {
  if (wr.num_sge < 0 || static_cast<uint32_t>(wr.num_sge) > init_.cap.max_send_sge) return EINVAL;
  switch (wr.opcode) {
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM:
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
    case IBV_WR_RDMA_READ:
    case IBV_WR_ATOMIC_CMP_AND_SWP:
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
      break;
    default:
      return EINVAL;
  }
  uint64_t len = 0;
  for (int i = 0; i < wr.num_sge; ++i) len += wr.sg_list[i].length;
  if (len > kMaxMessage) return EINVAL;
  if ((wr.send_flags & IBV_SEND_INLINE) && (len > init_.cap.max_inline_data || wr.opcode == IBV_WR_RDMA_READ))
    return EINVAL;
  const bool atomic = wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
  if (atomic && (wr.num_sge != 1 || len != 8)) return EINVAL;
  return 0;
}

int QueuePair::post_send(ibv_send_wr* wr, ibv_send_wr** bad_wr) {
  for (; wr; wr = wr->next) {
    int err = 0;
    if (state_ == IBV_QPS_RESET || state_ == IBV_QPS_INIT || state_ == IBV_QPS_RTR)
      err = EINVAL;
    else if (sq_.size() >= init_.cap.max_send_wr)
      err = ENOMEM;
    else
      err = check_send(*wr);
    if (err) {
      if (bad_wr) *bad_wr = wr;
      return err;
    }
    SendWqe w;
    w.wr_id = wr->wr_id;
    w.opcode = wr->opcode;
    w.send_flags = wr->send_flags;
    w.imm_data = wr->imm_data;
    w.signaled = init_.sq_sig_all || (wr->send_flags & IBV_SEND_SIGNALED);
    w.posted = device_.sim().now();
    if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
      w.remote_addr = wr->wr.atomic.remote_addr;
      w.rkey = wr->wr.atomic.rkey;
      w.compare_add = wr->wr.atomic.compare_add;
      w.swap = wr->wr.atomic.swap;
    } else if (type() == IBV_QPT_UD) {
      w.ah = static_cast<AddressHandle*>(wr->wr.ud.ah);
      w.remote_qpn = wr->wr.ud.remote_qpn;
      w.remote_qkey = wr->wr.ud.remote_qkey;
    } else {
      w.remote_addr = wr->wr.rdma.remote_addr;
      w.rkey = wr->wr.rdma.rkey;
    }
    w.sges.assign(wr->sg_list, wr->sg_list + wr->num_sge);
    for (const ibv_sge& s : w.sges) w.length += s.length;
    if (wr->send_flags & IBV_SEND_INLINE) {
      // Inline data is copied at post time: the buffer may be reused at once.
      w.inline_data.resize(w.length);
      size_t off = 0;
      for (const ibv_sge& s : w.sges) {
        const auto where = pd_.memory().locate(s.addr, s.length);
        if (!where) {
          if (bad_wr) *bad_wr = wr;
          return EFAULT;
        }
        const std::span<std::byte> to(w.inline_data.data() + off, s.length);
        if (where->computed)
          Payload(where->computed->source, where->offset, s.length).copy_to(to);
        else if (s.length)
          std::memcpy(to.data(), where->bytes, s.length);
        off += s.length;
      }
    }
    const bool flush = state_ == IBV_QPS_ERR || state_ == IBV_QPS_SQE;  // IBA 10.3.1: flushed at once
    const bool gathers = w.length > 0 && w.opcode != IBV_WR_RDMA_READ &&
                         w.opcode != IBV_WR_ATOMIC_CMP_AND_SWP &&
                         w.opcode != IBV_WR_ATOMIC_FETCH_AND_ADD;  // local data the NIC must read
    sq_.push_back(std::move(w));
    if (flush) {
      SendWqe f = std::move(sq_.back());
      sq_.pop_back();
      f.signaled = true;
      complete_send(f, IBV_WC_WR_FLUSH_ERR);
      continue;
    }
    // The NIC learns of the WQE after the doorbell (and, for DMA doorbells, the WQE fetch).
    const bool pio = (wr->send_flags & IBV_SEND_INLINE) != 0;
    device_.sim().after(device_.nic().doorbell_delay(pio, gathers && !pio), [this] { send_posted(); });
  }
  return 0;
}

namespace {
// A receive WQE from the work request: its SGEs and their total length.
RecvWqe recv_wqe_of(const ibv_recv_wr& wr) {
  RecvWqe r;
  r.wr_id = wr.wr_id;
  r.sges.assign(wr.sg_list, wr.sg_list + wr.num_sge);
  for (const ibv_sge& s : r.sges) r.length += s.length;
  return r;
}
}  // namespace

int QueuePair::post_recv(ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
  for (; wr; wr = wr->next) {
    int err = 0;
    if (state_ == IBV_QPS_RESET || init_.srq)
      err = EINVAL;
    else if (rq_.size() >= init_.cap.max_recv_wr)
      err = ENOMEM;
    else if (wr->num_sge < 0 || static_cast<uint32_t>(wr->num_sge) > init_.cap.max_recv_sge)
      err = EINVAL;
    if (err) {
      if (bad_wr) *bad_wr = wr;
      return err;
    }
    RecvWqe r = recv_wqe_of(*wr);
    if (state_ == IBV_QPS_ERR) {
      complete_recv(r, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, 0, false);
      continue;
    }
    rq_.push_back(std::move(r));
    recv_posted();
  }
  return 0;
}

bool QueuePair::take_recv(RecvWqe& out) {
  if (init_.srq) return init_.srq->take(out);
  if (rq_.empty()) return false;
  out = std::move(rq_.front());
  rq_.pop_front();
  return true;
}

void QueuePair::give_back_recv(RecvWqe&& r) {
  if (init_.srq)
    init_.srq->give_back(std::move(r));
  else
    rq_.push_front(std::move(r));
}

// ---------------------------------------------------------- SharedReceiveQueue

int SharedReceiveQueue::post(ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
  for (; wr; wr = wr->next) {
    int err = 0;
    if (wqes_.size() >= attr_.max_wr)
      err = ENOMEM;
    else if (wr->num_sge < 0 || static_cast<uint32_t>(wr->num_sge) > attr_.max_sge)
      err = EINVAL;
    if (err) {
      if (bad_wr) *bad_wr = wr;
      return err;
    }
    RecvWqe r = recv_wqe_of(*wr);
    wqes_.push_back(std::move(r));
  }
  return 0;
}

int SharedReceiveQueue::modify(const ibv_srq_attr& attr, int mask) {
  if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT)) return EINVAL;
  if (mask & IBV_SRQ_MAX_WR) return EINVAL;  // resizing: not supported (no IBV_DEVICE_SRQ_RESIZE)
  if ((mask & IBV_SRQ_LIMIT) && attr.srq_limit > attr_.max_wr) return EINVAL;
  if (mask & IBV_SRQ_LIMIT) attr_.srq_limit = attr.srq_limit;
  return 0;
}

bool SharedReceiveQueue::take(RecvWqe& out) {
  if (wqes_.empty()) return false;
  out = std::move(wqes_.front());
  wqes_.pop_front();
  // IBA 10.2.9.4 (C10-124.1.1): below the armed limit, one event, then disarmed.
  if (attr_.srq_limit > 0 && wqes_.size() < attr_.srq_limit) {
    attr_.srq_limit = 0;
    device_.raise({IBV_EVENT_SRQ_LIMIT_REACHED, nullptr, nullptr, this});
  }
  return true;
}

ibv_wc_opcode QueuePair::wc_opcode(ibv_wr_opcode op) const {
  switch (op) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
      return IBV_WC_RDMA_WRITE;
    case IBV_WR_RDMA_READ:
      return IBV_WC_RDMA_READ;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
      return IBV_WC_COMP_SWAP;
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
      return IBV_WC_FETCH_ADD;
    default:
      return IBV_WC_SEND;
  }
}

namespace {
// Walks `sges` from byte `offset` for `len` bytes, handing each piece to
// `copy(region, address, length, done)`; false when a piece fails its
// region's checks.
template <typename Copy>
bool walk_sges(const Device& d, const ProtectionDomain& pd, const std::vector<ibv_sge>& sges, uint64_t offset,
               size_t len, int access, Copy&& copy) {
  size_t done = 0;
  for (const ibv_sge& sge : sges) {
    if (done == len) break;
    if (offset >= sge.length) {
      offset -= sge.length;
      continue;
    }
    const uint64_t n = std::min<uint64_t>(sge.length - offset, len - done);
    const MemoryRegion* mr = d.mr_by_lkey(sge.lkey);
    if (!mr || mr->pd != &pd || !mr->contains(sge.addr + offset, n) || (mr->access & access) != access)
      return false;
    copy(*mr, sge.addr + offset, n, done);
    done += n;
    offset = 0;
  }
  return done == len;
}
}  // namespace

bool QueuePair::gather(const std::vector<ibv_sge>& sges, uint64_t offset, std::span<std::byte> out) const {
  return walk_sges(device_, pd_, sges, offset, out.size(), 0,
                   [&](const MemoryRegion& mr, uint64_t a, size_t n, size_t done) {
                     mr.read(a, n).copy_to(out.subspan(done, n));
                   });
}

Payload QueuePair::source(const std::vector<ibv_sge>& sges, uint64_t offset, size_t len) const {
  Payload whole;
  const bool ok = walk_sges(device_, pd_, sges, offset, len, 0,
                            [&](const MemoryRegion& mr, uint64_t a, size_t n, size_t done) {
                              if (done == 0 && n == len) whole = mr.read(a, n);
                            });
  return ok ? whole : Payload{};
}

bool QueuePair::scatter(const std::vector<ibv_sge>& sges, uint64_t offset, const Payload& in) const {
  return walk_sges(
      device_, pd_, sges, offset, in.size(), IBV_ACCESS_LOCAL_WRITE,
      [&](const MemoryRegion& mr, uint64_t a, size_t n, size_t done) { mr.write(a, in.subspan(done, n)); });
}

void QueuePair::complete_send(const SendWqe& w, ibv_wc_status status, uint32_t byte_len) {
  if (drain_notify_) check_drained();
  if (status == IBV_WC_SUCCESS && !w.signaled) return;
  ibv_wc wc{};
  wc.wr_id = w.wr_id;
  wc.status = status;
  wc.opcode = wc_opcode(w.opcode);
  wc.byte_len = byte_len;
  wc.qp_num = qpn_;
  device_.nic().deliver_cqe(*init_.send_cq, wc);
}

void QueuePair::complete_recv(const RecvWqe& w, ibv_wc_status status, ibv_wc_opcode op, uint32_t byte_len,
                              uint32_t imm_be, bool with_imm, uint32_t src_qp, bool grh, uint16_t slid,
                              uint8_t sl, bool solicited) {
  ibv_wc wc{};
  wc.wr_id = w.wr_id;
  wc.status = status;
  wc.opcode = op;
  wc.byte_len = byte_len;
  wc.qp_num = qpn_;
  wc.src_qp = src_qp;
  wc.slid = slid;
  wc.sl = sl;
  if (with_imm) {
    wc.imm_data = imm_be;
    wc.wc_flags |= IBV_WC_WITH_IMM;
  }
  if (grh) wc.wc_flags |= IBV_WC_GRH;
  device_.nic().deliver_cqe(*init_.recv_cq, wc, solicited);
}

void QueuePair::enter_send_queue_error() {
  const ibv_qp_state from = state_;
  state_ = IBV_QPS_SQE;
  state_changed(from);
  flush_send_queue();
}

void QueuePair::flush_send_queue() {
  while (!sq_.empty()) {
    SendWqe w = std::move(sq_.front());
    sq_.pop_front();
    w.signaled = true;
    complete_send(w, IBV_WC_WR_FLUSH_ERR);
  }
}

void QueuePair::enter_error() {
  const ibv_qp_state from = state_;
  state_ = IBV_QPS_ERR;
  if (from != IBV_QPS_ERR) state_changed(from);
  // IBA 10.3.1: in the error state every outstanding WR completes with a flush error.
  flush_send_queue();
  while (!rq_.empty()) {
    RecvWqe r = std::move(rq_.front());
    rq_.pop_front();
    complete_recv(r, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, 0, false);
  }
  // A QP on an SRQ takes no more WQEs from it once in error: the Last WQE
  // Reached event (IBA 11.6.3.1) tells its consumer it may destroy the QP
  // without losing a WQE (as the kernel's ib_drain_qp waits for it).
  if (from != IBV_QPS_ERR && init_.srq) device_.raise({IBV_EVENT_QP_LAST_WQE_REACHED, nullptr, this});
}

// --------------------------------------------------------------------- Device

namespace {

// Keys: an index and an 8-bit "key" byte, as IBA 10.6.3 lays them out.
uint32_t lkey_of(uint32_t index) { return (index + 1) << 8 | 0x11; }
uint32_t rkey_of(uint32_t index) { return (index + 1) << 8 | 0x22; }

}  // namespace

Device::Device(Rnic& nic, HostMemory& memory) : nic_(nic), memory_(memory), async_(nic.sim()) {}
Device::~Device() = default;

Simulator& Device::sim() const { return nic_.sim(); }

ProtectionDomain* Device::alloc_pd(HostMemory* own_memory) {
  pds_.push_back(
      std::make_unique<ProtectionDomain>(*this, static_cast<uint32_t>(pds_.size() + 1), own_memory));
  return pds_.back().get();
}

HostMemory& ProtectionDomain::memory() const { return own_memory ? *own_memory : device.memory(); }

MemoryRegion* Device::reg_mr(ProtectionDomain* pd, uint64_t addr, uint64_t length, int access) {
  if (!pd || &pd->device != this) {
    errno = EINVAL;
    return nullptr;
  }
  // Remote write and remote atomic need local write (IBA 10.6.3.1; ibv_reg_mr(3)).
  if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) && !(access & IBV_ACCESS_LOCAL_WRITE)) {
    errno = EINVAL;
    return nullptr;
  }
  const auto where = pd->memory().locate(addr, length);
  if (length == 0 || !where) {
    errno = EFAULT;  // the pages cannot be pinned
    return nullptr;
  }
  auto mr = std::make_unique<MemoryRegion>();
  const uint32_t index = static_cast<uint32_t>(mrs_.size());
  mr->pd = pd;
  mr->addr = addr;
  mr->length = length;
  mr->lkey = lkey_of(index);
  mr->rkey = rkey_of(index);
  mr->access = access;
  mr->base = where->bytes;
  mr->computed = where->computed;
  mr->computed_at = where->offset;
  mr->valid = true;
  mrs_.push_back(std::move(mr));
  return mrs_.back().get();
}

int Device::dereg_mr(MemoryRegion* mr) {
  if (!mr || !mr->valid) return EINVAL;
  mr->valid = false;
  return 0;
}

CompletionQueue* Device::create_cq(int cqe, CompletionChannel* channel) {
  if (cqe < 1 || static_cast<uint32_t>(cqe) > kMaxCqe) {
    errno = EINVAL;
    return nullptr;
  }
  cqs_.push_back(std::make_unique<CompletionQueue>(*this, cqe, channel));
  return cqs_.back().get();
}

CompletionChannel* Device::create_comp_channel() {
  channels_.push_back(std::make_unique<CompletionChannel>(*this));
  return channels_.back().get();
}

SharedReceiveQueue* Device::create_srq(ProtectionDomain* pd, const ibv_srq_init_attr& init) {
  if (!pd || init.attr.max_wr == 0 || init.attr.max_wr > kMaxQpWr || init.attr.max_sge > kMaxSge) {
    errno = EINVAL;
    return nullptr;
  }
  srqs_.push_back(std::make_unique<SharedReceiveQueue>(*this, *pd, init.attr));
  return srqs_.back().get();
}

void Device::raise(const AsyncEvent& e) {
  async_.push(e);
  // Every context is told of the port's events; an affiliated one (a QP's,
  // a CQ's, an SRQ's) goes to the context that made its object only, as
  // the kernel's uverbs gives it to that object's file alone.
  const bool port = e.type == IBV_EVENT_PORT_ACTIVE || e.type == IBV_EVENT_PORT_ERR;
  std::erase_if(listeners_, [](const Listener& l) { return l.queue.expired(); });
  for (const Listener& l : listeners_)
    if (port || l.mine(e)) l.queue.lock()->push(e);
}

void Device::cq_overflowed(CompletionQueue& cq) {
  raise({IBV_EVENT_CQ_ERR, &cq});
  for (const auto& qp : qps_)
    if (qp && (qp->init_attr().send_cq == &cq || qp->init_attr().recv_cq == &cq)) qp->fail();
}

QueuePair* Device::create_qp(ProtectionDomain* pd, const QpInitAttr& init) {
  // A QP and its SRQ share a PD (IBA 10.2.9.1).
  if (init.srq && (&init.srq->pd() != pd || !nic_.fabric().supports_srq())) {
    errno = init.srq && &init.srq->pd() != pd ? EINVAL : EOPNOTSUPP;
    return nullptr;
  }
  if (!pd || !init.send_cq || !init.recv_cq || init.cap.max_send_wr > kMaxQpWr ||
      init.cap.max_recv_wr > kMaxQpWr || init.cap.max_send_sge > kMaxSge || init.cap.max_recv_sge > kMaxSge ||
      init.cap.max_inline_data > nic_.config().max_inline) {
    errno = EINVAL;
    return nullptr;
  }
  // QPN 0 and 1 are the special QPs (SMI, GSI); ordinary QPs start after them.
  const uint32_t qpn = 0x11 + static_cast<uint32_t>(qps_.size());
  auto qp = nic_.fabric().create_qp(*this, *pd, qpn, init);
  if (!qp) return nullptr;  // errno set by the fabric
  qps_.push_back(std::move(qp));
  return qps_.back().get();
}

uint32_t Device::skip_qp() {
  qps_.emplace_back();
  return 0x11 + static_cast<uint32_t>(qps_.size() - 1);
}

uint32_t Device::skip_mr() {
  mrs_.emplace_back();
  return rkey_of(static_cast<uint32_t>(mrs_.size() - 1));
}

QueuePair* Device::create_gsi_qp(ProtectionDomain* pd, const QpInitAttr& init) {
  if (gsi_) {
    errno = EEXIST;
    return nullptr;
  }
  if (!pd || !init.send_cq || !init.recv_cq || init.qp_type != IBV_QPT_UD) {
    errno = EINVAL;
    return nullptr;
  }
  gsi_ = nic_.fabric().create_qp(*this, *pd, 1, init);
  return gsi_.get();  // null with errno set by the fabric
}

AddressHandle* Device::create_ah(ProtectionDomain* pd, const ibv_ah_attr& attr) {
  // RoCE: an address handle without a GRH is EINVAL, as rdma-core returns it.
  if (!pd || (!attr.is_global && nic_.fabric().requires_grh())) {
    errno = EINVAL;
    return nullptr;
  }
  ahs_.push_back(std::make_unique<AddressHandle>(*pd, attr));
  return ahs_.back().get();
}

MemoryRegion* Device::mr_by_lkey(uint32_t lkey) const {
  const uint32_t index = (lkey >> 8) - 1;
  if (index >= mrs_.size()) return nullptr;
  MemoryRegion* mr = mrs_[index].get();
  return mr && mr->valid && mr->lkey == lkey ? mr : nullptr;
}

MemoryRegion* Device::mr_by_rkey(uint32_t rkey) const {
  const uint32_t index = (rkey >> 8) - 1;
  if (index >= mrs_.size()) return nullptr;
  MemoryRegion* mr = mrs_[index].get();
  return mr && mr->valid && mr->rkey == rkey ? mr : nullptr;
}

QueuePair* Device::qp_by_num(uint32_t qpn) const {
  if (qpn == 1) return gsi_.get();
  const uint32_t index = qpn - 0x11;
  return index < qps_.size() ? qps_[index].get() : nullptr;
}

int Device::query_port(uint8_t port, ibv_port_attr& out) const {
  if (port != 1) return EINVAL;
  out = {};
  out.state = nic_.port().up() ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
  out.max_mtu = IBV_MTU_4096;
  out.active_mtu = nic_.active_mtu();
  out.lid = nic_.lid();
  // Only the subnet manager of a native IB fabric gives a port a LID.
  out.link_layer = nic_.lid() ? IBV_LINK_LAYER_INFINIBAND : IBV_LINK_LAYER_ETHERNET;
  out.gid_tbl_len = 1;
  out.pkey_tbl_len = 1;
  return 0;
}

int Device::query_pkey(uint8_t port, int index, uint16_t& out) const {
  if (port != 1 || index != 0) return EINVAL;
  out = kDefaultPkey;
  return 0;
}

int Device::query_gid(uint8_t port, int index, ibv_gid& out) const {
  if (port != 1 || index != 0) return EINVAL;
  out = nic_.gid();
  return 0;
}

}  // namespace rdmasim::verbs
