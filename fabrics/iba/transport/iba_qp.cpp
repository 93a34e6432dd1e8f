#include "fabrics/iba/transport/iba_qp.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

#include "fabrics/iba/opcodes.hpp"
#include "fabrics/iba/transport/psn.hpp"
#include "fabrics/iba/wire/aeth.hpp"
#include "nodes/host/memory.hpp"

namespace rdmasim {

using verbs::MemoryRegion;
using verbs::RecvWqe;
using verbs::SendWqe;

namespace {

// AETH syndrome (IBA 9.3.5): bits 6..5 say ACK (00), RNR NAK (01) or NAK (11).
constexpr uint8_t kAckSyndrome = 0x1F;  // ACK, credit field 11111: end-to-end credits not used
constexpr uint8_t kNakSeqError = 0x60;
constexpr uint8_t kNakInvalidRequest = 0x61;
constexpr uint8_t kNakRemoteAccess = 0x62;
constexpr uint8_t kNakRemoteOp = 0x63;
bool is_rnr_nak(uint8_t s) { return (s & 0x60) == 0x20; }
bool is_nak(uint8_t s) { return (s & 0x60) == 0x60; }

// Local ACK timeout: 4.096 us * 2^timeout (IBA 9.7.6.1.3); 0 means infinite.
Time ack_timeout(uint8_t t) { return t == 0 ? Time::max() : Time::ns(4096) * (int64_t{1} << std::min<int>(t, 31)); }

constexpr uint32_t kMaxPacketsPerAck = 64;

bool is_read(const SendWqe& w) { return w.opcode == IBV_WR_RDMA_READ; }
bool is_atomic(const SendWqe& w) {
  return w.opcode == IBV_WR_ATOMIC_CMP_AND_SWP || w.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

}  // namespace

IbaQp::IbaQp(verbs::Device& d, verbs::ProtectionDomain& pd, uint32_t qpn, const verbs::QpInitAttr& init,
             Rnic& nic, IbaFabric& fabric)
    : QueuePair(d, pd, qpn, init),
      nic_(nic),
      fabric_(fabric),
      retry_timer_(nic.sim(), this, [](void* qp) { static_cast<IbaQp*>(qp)->on_retry_timeout(); }) {
  if (fabric.dcqcn() && init.qp_type != IBV_QPT_UD)
    dcqcn_ = std::make_unique<DcqcnRate>(nic.sim(), *fabric.dcqcn(), nic.port().params().rate, this,
                                         [](const void* qp) {
                                           auto* q = static_cast<const IbaQp*>(qp);
                                           return !q->sq_.empty() || !q->responses_.empty();
                                         });
  paced_source_ = dcqcn_ != nullptr;
}

IbaQp::~IbaQp() {
  nic_.sim().cancel(rnr_timer_);
  nic_.forget(*this);
}

int IbaQp::check_send(const ibv_send_wr& wr) const {
  if (int e = QueuePair::check_send(wr)) return e;
  const ibv_qp_type t = type();
  const bool rdma = wr.opcode == IBV_WR_RDMA_WRITE || wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
  const bool read_or_atomic = wr.opcode == IBV_WR_RDMA_READ || wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
                              wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
  if (t == IBV_QPT_UD && (rdma || read_or_atomic)) return EINVAL;
  if (t == IBV_QPT_UC && read_or_atomic) return EINVAL;
  if (t == IBV_QPT_UD && wr.wr.ud.ah == nullptr) return EINVAL;
  return 0;
}

void IbaQp::state_changed(ibv_qp_state from) {
  (void)from;
  if (state_ == IBV_QPS_RTR || (state_ == IBV_QPS_RTS && from == IBV_QPS_INIT)) {
    epsn_ = attr_.rq_psn & kPsnMask;
  }
  if (state_ == IBV_QPS_RTS && from != IBV_QPS_RTS) {
    req_psn_ = unacked_psn_ = high_psn_ = attr_.sq_psn & kPsnMask;
    retry_left_ = attr_.retry_cnt;
    rnr_left_ = attr_.rnr_retry;
    if (!sq_.empty()) nic_.wake(*this);
  }
  if (state_ == IBV_QPS_ERR || state_ == IBV_QPS_RESET) {
    retry_timer_.stop();
    nic_.sim().cancel(rnr_timer_);
    // A NAK the responder queued before the error still goes out (it tells
    // the requester why); nothing else does.
    std::erase_if(responses_, [&](const Response& r) {
      return state_ == IBV_QPS_RESET || r.kind != Response::Ack || !is_nak(r.syndrome);
    });
    req_wqe_ = 0;
    req_offset_ = 0;
    rd_atomic_in_flight_ = 0;
    retrying_ = false;
    in_msg_ = InMessage::None;
    // A receive a SEND was filling is flushed with the others (IBA 10.3.1).
    if (recv_active_ && state_ == IBV_QPS_ERR) rq_.push_front(std::move(recv_));
    recv_active_ = false;
  }
}

void IbaQp::send_posted() {
  if (dcqcn_) dcqcn_->busy();
  if (state_ == IBV_QPS_RTS) nic_.wake(*this);
}

void IbaQp::recv_posted() {}

uint32_t IbaQp::packets_of(const SendWqe& w) const {
  if (is_atomic(w) || type() == IBV_QPT_UD) return 1;
  const uint64_t mtu = mtu_bytes();
  return static_cast<uint32_t>(std::max<uint64_t>(1, (w.length + mtu - 1) / mtu));
}

// ---------------------------------------------------------------- requester

bool IbaQp::requester_ready() const {
  if (state_ != IBV_QPS_RTS || rnr_wait_ || req_wqe_ >= sq_.size()) return false;
  const SendWqe& w = sq_[req_wqe_];
  // IBA 9.7.2: no more RDMA READ / atomic requests in flight than max_rd_atomic.
  if ((is_read(w) || is_atomic(w)) && req_offset_ == 0 && !w.started &&
      rd_atomic_in_flight_ >= std::max<int>(1, attr_.max_rd_atomic))
    return false;
  // IBV_SEND_FENCE (IBA 10.8.3.3): wait until every READ and atomic before it has completed.
  if ((w.send_flags & IBV_SEND_FENCE) && req_offset_ == 0 && !w.started)
    for (size_t i = 0; i < req_wqe_; ++i)
      if (is_read(sq_[i]) || is_atomic(sq_[i])) return false;
  return true;
}

bool IbaQp::has_tx() const { return !responses_.empty() || requester_ready(); }

Packet IbaQp::next_frame() {
  const bool data = responses_.empty() || responses_.front().kind == Response::ReadData;
  Packet p = responses_.empty() ? next_request() : next_response();
  if (dcqcn_ && data && p) pace(p.size());
  return p;
}

// ---------------------------------------------------------------- DCQCN

// The QP's data frames (requests, READ responses) keep to its rate; ACKs go
// when they can.
Time IbaQp::not_before() const {
  if (!dcqcn_ || !dcqcn_->limited()) return Time{};
  if (!responses_.empty() && responses_.front().kind != Response::ReadData) return Time{};
  return next_send_;
}

void IbaQp::pace(size_t frame_bytes) {
  dcqcn_->busy();  // a responder sending READ data was idle as far as posts go
  dcqcn_->on_sent(frame_bytes);
  if (!dcqcn_->limited()) return;
  const Time now = nic_.sim().now();
  const uint64_t wire = frame_bytes + nic_.port().params().wire_overhead;
  next_send_ = std::max(now, next_send_) + dcqcn_->rate().tx_time(wire);
}

// Notification point: a packet for this QP arrived marked CE. Its sender
// hears of it by a CNP, at most one per cnp_interval (the paper's N).
void IbaQp::congestion_experienced() {
  const DcqcnConfig* cfg = fabric_.dcqcn();
  if (!cfg || type() == IBV_QPT_UD) return;
  const Time now = nic_.sim().now();
  if (cnp_sent_ && now - last_cnp_ < cfg->cnp_interval) return;
  cnp_sent_ = true;
  last_cnp_ = now;
  Packet p = nic_.alloc();
  std::memset(p.push_back(kCnpReservedLen).data(), 0, kCnpReservedLen);
  IbaHeaders h;
  h.opcode = CNP;
  h.dest_qp = attr_.dest_qp_num;
  h.becn = true;
  iba_emit(p, h);
  fabric_.encap(p, attr_.ah_attr, qpn_, attr_.dest_qp_num);
  nic_.send_cnp(std::move(p));
}

// Reaction point: cut this QP's rate.
void IbaQp::on_cnp() {
  nic_.note_cnp_received();
  if (dcqcn_) dcqcn_->on_cnp();
}

// The payload of `w` from `offset` on, into `dst` (bytes of p). An RC
// requester's buffer is the NIC's until the work completes, which needs the
// responder's ACK: a payload from one SGE is deferred (core/packet.hpp),
// read when the responder places it or a capture shows it.
bool IbaQp::copy_out(const SendWqe& w, uint64_t offset, Packet& p, std::span<std::byte> dst, ibv_wc_status& err) {
  if (!w.inline_data.empty() || (w.send_flags & IBV_SEND_INLINE)) {
    std::memcpy(dst.data(), w.inline_data.data() + offset, dst.size());
    return true;
  }
  if (type() == IBV_QPT_RC && !dst.empty()) {
    if (auto src = source(w.sges, offset, dst.size()); !src.empty()) {
      p.defer(dst, src.data());
      return true;
    }
  }
  if (!gather(w.sges, offset, dst)) {
    err = IBV_WC_LOC_PROT_ERR;
    return false;
  }
  return true;
}

Packet IbaQp::next_ud_request(SendWqe& w) {
  // C10-93.1.1: a UD message longer than the port MTU sends no packet and
  // raises no error; the WQE completes successfully (as rxe does).
  const bool too_long = w.length > mtu_bytes();
  Packet p = too_long ? Packet{} : nic_.alloc();
  IbaHeaders h;
  h.opcode = w.opcode == IBV_WR_SEND_WITH_IMM ? UD_SEND_ONLY_IMM : UD_SEND_ONLY;
  h.solicited = w.send_flags & IBV_SEND_SOLICITED;
  h.dest_qp = w.remote_qpn;
  h.psn = req_psn_;
  // IBA 10.2.5: a Q_Key with the high bit set means "use the QP's own".
  h.qkey = (w.remote_qkey & 0x80000000u) ? attr_.qkey : w.remote_qkey;
  h.src_qp = qpn_;
  h.imm = ntohl(w.imm_data);
  ibv_wc_status err = IBV_WC_SUCCESS;
  if (!too_long) {
    if (!copy_out(w, 0, p, p.push_back(w.length), err)) {
      fail_front(err);
      return Packet{};
    }
    iba_emit(p, h);
    fabric_.encap(p, w.ah->attr, qpn_, w.remote_qpn);
  }
  req_psn_ = psn_add(req_psn_, 1);
  // UD completes when the datagram leaves: nothing will acknowledge it.
  SendWqe done = std::move(sq_.front());
  sq_.pop_front();
  complete_send(done, IBV_WC_SUCCESS);
  return p;
}

Packet IbaQp::next_request() {
  SendWqe& w = sq_[req_wqe_];
  if (type() == IBV_QPT_UD) return next_ud_request(w);

  const uint32_t mtu = mtu_bytes();
  if (!w.started || req_offset_ == 0) {
    if (!w.started) {
      w.started = true;
      w.first_psn = req_psn_;
      w.last_psn = psn_add(req_psn_, packets_of(w) - 1);
      if (is_read(w) || is_atomic(w)) ++rd_atomic_in_flight_;
    }
  }

  IbaHeaders h;
  h.dest_qp = attr_.dest_qp_num;
  h.psn = req_psn_;
  h.solicited = (w.send_flags & IBV_SEND_SOLICITED) != 0;
  const bool rc = type() == IBV_QPT_RC;
  const uint8_t base = rc ? 0x00 : 0x20;  // RC or UC opcode space (IBA 9.2.1)
  Packet p = nic_.alloc();

  if (is_read(w)) {
    // One request for the rest of the data (a retried READ resumes mid-way).
    h.opcode = RC_RDMA_READ_REQUEST;
    h.va = w.remote_addr + req_offset_;
    h.rkey = w.rkey;
    h.dma_len = static_cast<uint32_t>(w.length - req_offset_);
    h.ack_req = ask_for_ack(true);
    iba_emit(p, h);
    req_psn_ = psn_add(w.last_psn, 1);
    req_offset_ = 0;
    ++req_wqe_;
  } else if (is_atomic(w)) {
    h.opcode = w.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? RC_COMPARE_SWAP : RC_FETCH_ADD;
    h.va = w.remote_addr;
    h.rkey = w.rkey;
    h.swap_add = w.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? w.swap : w.compare_add;
    h.compare = w.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? w.compare_add : 0;
    h.ack_req = ask_for_ack(true);
    iba_emit(p, h);
    req_psn_ = psn_add(req_psn_, 1);
    ++req_wqe_;
  } else {
    const uint64_t n = std::min<uint64_t>(mtu, w.length - req_offset_);
    const bool first = req_offset_ == 0;
    const bool last = req_offset_ + n >= w.length;
    const bool write = w.opcode == IBV_WR_RDMA_WRITE || w.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
    const bool imm = w.opcode == IBV_WR_SEND_WITH_IMM || w.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
    uint8_t op;
    if (write) {
      op = first && last ? (imm ? RC_RDMA_WRITE_ONLY_IMM : RC_RDMA_WRITE_ONLY)
           : first       ? RC_RDMA_WRITE_FIRST
           : last        ? (imm ? RC_RDMA_WRITE_LAST_IMM : RC_RDMA_WRITE_LAST)
                         : RC_RDMA_WRITE_MIDDLE;
    } else {
      op = first && last ? (imm ? RC_SEND_ONLY_IMM : RC_SEND_ONLY)
           : first       ? RC_SEND_FIRST
           : last        ? (imm ? RC_SEND_LAST_IMM : RC_SEND_LAST)
                         : RC_SEND_MIDDLE;
    }
    h.opcode = static_cast<uint8_t>(base | op);
    if (write && first) {
      h.va = w.remote_addr;
      h.rkey = w.rkey;
      h.dma_len = static_cast<uint32_t>(w.length);
    }
    h.imm = ntohl(w.imm_data);
    // Solicited Event only on the last packet of a SEND or WRITE with immediate (9.2.2).
    h.solicited = h.solicited && last && (!write || imm);
    h.ack_req = ask_for_ack(last);
    ibv_wc_status err = IBV_WC_SUCCESS;
    if (!copy_out(w, req_offset_, p, p.push_back(n), err)) {
      fail_front(err);
      return Packet{};
    }
    iba_emit(p, h);
    if (psn_before(req_psn_, high_psn_)) ++stats_.retransmitted_packets;
    req_psn_ = psn_add(req_psn_, 1);
    req_offset_ += n;
    if (last) {
      req_offset_ = 0;
      ++req_wqe_;
    }
  }
  fabric_.encap(p, attr_.ah_attr, qpn_, attr_.dest_qp_num);

  if (!rc) {  // UC: complete once the last packet is on its way
    if (req_wqe_ > 0 && req_offset_ == 0) {
      SendWqe done = std::move(sq_.front());
      sq_.pop_front();
      --req_wqe_;
      complete_send(done, IBV_WC_SUCCESS);
    }
  } else if (!retry_timer_.armed()) {
    arm_retry_timer();
  }
  if (psn_before(high_psn_, req_psn_)) high_psn_ = req_psn_;
  return p;
}

// AckReq (IBA 9.2.3): on the last packet of every RC request, and after
// more than kMaxPacketsPerAck packets without one (rxe's
// RXE_MAX_PKT_PER_ACK), so a loss near the end of a long message is
// recovered from the last ACK, not from the message's start.
bool IbaQp::ask_for_ack(bool last) {
  if (type() != IBV_QPT_RC) return false;
  const bool ask = last || noack_pkts_++ > kMaxPacketsPerAck;
  if (ask) noack_pkts_ = 0;
  return ask;
}

// Go-back-N (IBA 9.7.6.1.2): resend everything from `psn` on. Until
// something new is acknowledged, further signs that `psn` is missing are the
// same loss seen again, not a reason for another retry.
void IbaQp::go_back_to(uint32_t psn) {
  retrying_ = true;
  retry_psn_ = psn;
  for (size_t i = 0; i < sq_.size(); ++i) {
    SendWqe& w = sq_[i];
    if (!w.started) break;
    if (psn_diff(psn, w.last_psn) > 0) continue;
    const int32_t k = std::max(0, psn_diff(psn, w.first_psn));
    req_wqe_ = i;
    req_psn_ = psn_add(w.first_psn, k);
    req_offset_ = static_cast<uint64_t>(k) * mtu_bytes();
    if (is_read(w)) req_offset_ = std::max<uint64_t>(req_offset_, w.done_bytes);
    if (is_atomic(w)) req_offset_ = 0;
    for (size_t j = i + 1; j < sq_.size(); ++j) {
      if (!sq_[j].started) break;
      if (is_read(sq_[j]) || is_atomic(sq_[j])) --rd_atomic_in_flight_;
      sq_[j].started = false;
      sq_[j].done_bytes = 0;
    }
    if (state_ == IBV_QPS_RTS) nic_.wake(*this);
    return;
  }
}

// ---------------------------------------------------------------- completer

void IbaQp::arm_retry_timer() {
  const Time t = ack_timeout(attr_.timeout);
  const bool outstanding = !sq_.empty() && sq_.front().started;
  if (t == Time::max() || !outstanding) {
    retry_timer_.stop();
    return;
  }
  retry_timer_.arm_after(t);
}

// Forward progress restores both retry budgets (IBA 9.7.6.1.3, 9.7.5.2.8).
void IbaQp::note_progress() {
  retry_left_ = attr_.retry_cnt;
  rnr_left_ = attr_.rnr_retry;
  retrying_ = false;
  arm_retry_timer();
}

// A response of the READ or atomic at `psn` went missing (IBA 9.7.6.1.4),
// seen by a later response or ACK: request it again, once, as rxe does; the
// responses behind the gap are dropped meanwhile. The retry consumes
// retry_cnt like any other.
void IbaQp::retry_from(uint32_t psn) {
  if (retrying_ && retry_psn_ == psn) return;
  ++stats_.seq_naks_received;
  if (spend_retry()) go_back_to(psn);
}

// One transport retry out of retry_cnt; false when none is left (the oldest
// WQE then fails with IBV_WC_RETRY_EXC_ERR and the QP goes to ERR).
bool IbaQp::spend_retry() {
  if (retry_left_ == 0) {
    fail_front(IBV_WC_RETRY_EXC_ERR);
    return false;
  }
  --retry_left_;
  return true;
}

void IbaQp::on_retry_timeout() {
  if (state_ != IBV_QPS_RTS || sq_.empty() || !sq_.front().started) return;
  ++stats_.timeouts;
  if (!spend_retry()) return;
  go_back_to(unacked_psn_);
  arm_retry_timer();
}

// Completes, in order, the SENDs and WRITEs that end before `psn`. A READ or
// atomic in the way has lost its response: it is requested again; nothing
// from it on counts as acknowledged.
void IbaQp::ack_through(uint32_t psn) {
  bool progress = false;
  while (!sq_.empty() && sq_.front().started) {
    SendWqe& w = sq_.front();
    if (is_read(w) || is_atomic(w)) {
      const uint32_t expected = psn_add(w.first_psn, static_cast<int64_t>(w.done_bytes / mtu_bytes()));
      if (psn_diff(w.last_psn, psn) < 0) retry_from(expected);
      if (psn_diff(psn, expected) > 0) psn = expected;
      break;
    }
    if (psn_diff(w.last_psn, psn) >= 0) break;
    SendWqe done = std::move(w);
    sq_.pop_front();
    if (req_wqe_ > 0) --req_wqe_;
    complete_send(done, IBV_WC_SUCCESS);
    progress = true;
  }
  if (psn_diff(psn, unacked_psn_) > 0) {
    unacked_psn_ = psn;
    progress = true;
  }
  if (progress) note_progress();
}

void IbaQp::on_ack(const IbaParsed& p) { ack_through(psn_add(p.h.psn, 1)); }

void IbaQp::on_read_response(const IbaParsed& p, std::span<const std::byte> payload) {
  ack_through(p.h.psn);  // a response implicitly acknowledges what came before
  if (sq_.empty() || !sq_.front().started || !is_read(sq_.front())) return;
  SendWqe& w = sq_.front();
  const uint32_t mtu = mtu_bytes();
  const uint32_t expected = psn_add(w.first_psn, static_cast<int64_t>(w.done_bytes / mtu));
  if (p.h.psn != expected) {
    // Beyond the expected PSN: a response went missing. Before it: a duplicate.
    if (psn_diff(p.h.psn, expected) > 0) retry_from(expected);
    return;
  }
  // Land the data in the local SGEs.
  if (!scatter(w.sges, w.done_bytes, payload)) {
    fail_front(IBV_WC_LOC_PROT_ERR);
    return;
  }
  w.done_bytes += payload.size();
  unacked_psn_ = psn_add(p.h.psn, 1);
  if (w.done_bytes >= w.length && p.h.psn == w.last_psn) {
    SendWqe finished = std::move(w);
    sq_.pop_front();
    if (req_wqe_ > 0) --req_wqe_;
    --rd_atomic_in_flight_;
    complete_send(finished, IBV_WC_SUCCESS, static_cast<uint32_t>(finished.length));
    if (state_ == IBV_QPS_RTS && requester_ready()) nic_.wake(*this);
  }
  note_progress();
}

void IbaQp::on_atomic_ack(const IbaParsed& p) {
  ack_through(p.h.psn);
  if (sq_.empty() || !sq_.front().started || !is_atomic(sq_.front()) || sq_.front().first_psn != p.h.psn) return;
  SendWqe w = std::move(sq_.front());
  sq_.pop_front();
  if (req_wqe_ > 0) --req_wqe_;
  --rd_atomic_in_flight_;
  unacked_psn_ = psn_add(p.h.psn, 1);
  // The original remote value lands in the local buffer, in host byte order.
  if (!w.sges.empty()) {
    const ibv_sge& sge = w.sges.front();
    const MemoryRegion* mr = device_.mr_by_lkey(sge.lkey);
    if (!mr || mr->pd != &pd_ || !mr->contains(sge.addr, 8) || !(mr->access & IBV_ACCESS_LOCAL_WRITE)) {
      sq_.push_front(std::move(w));
      ++rd_atomic_in_flight_;
      fail_front(IBV_WC_LOC_PROT_ERR);
      return;
    }
    std::memcpy(mr->bytes(sge.addr, 8).data(), &p.h.orig, 8);
  }
  complete_send(w, IBV_WC_SUCCESS, 8);
  note_progress();
  if (state_ == IBV_QPS_RTS && requester_ready()) nic_.wake(*this);
}

void IbaQp::on_nak(const IbaParsed& p) {
  const uint8_t s = p.h.syndrome;
  if (is_rnr_nak(s)) {
    ++stats_.rnr_naks_received;
    ack_through(p.h.psn);
    // rnr_retry 7 means retry forever (IBA 9.7.5.2.8).
    if (attr_.rnr_retry != 7) {
      if (rnr_left_ == 0) {
        fail_front(IBV_WC_RNR_RETRY_EXC_ERR);
        return;
      }
      --rnr_left_;
    }
    rnr_wait_ = true;
    retry_timer_.stop();
    const uint32_t psn = p.h.psn;
    rnr_timer_ = nic_.sim().after(rnr_timer_duration(s), [this, psn] {
      rnr_timer_ = {};
      rnr_wait_ = false;
      go_back_to(psn);
      arm_retry_timer();
    });
    return;
  }
  switch (s) {
    case kNakSeqError:  // consumes retry_cnt, as in rxe
      ack_through(p.h.psn);
      retry_from(p.h.psn);
      return;
    case kNakInvalidRequest:
      ack_through(p.h.psn);
      fail_front(IBV_WC_REM_INV_REQ_ERR);
      return;
    case kNakRemoteAccess:
      ack_through(p.h.psn);
      fail_front(IBV_WC_REM_ACCESS_ERR);
      return;
    default:
      ack_through(p.h.psn);
      fail_front(IBV_WC_REM_OP_ERR);
      return;
  }
}

// The oldest WQE fails with `status`; the QP goes to the error state and
// every other WQE is flushed (IBA 10.3.1, 11.6.2).
void IbaQp::fail_front(ibv_wc_status status) {
  if (!sq_.empty()) {
    SendWqe w = std::move(sq_.front());
    sq_.pop_front();
    w.signaled = true;  // errors always complete
    complete_send(w, status);
  }
  enter_error();
}

// ---------------------------------------------------------------- responder

IbaQp::RespStep IbaQp::check_psn(const IbaParsed& p) const {
  if (p.h.psn == epsn_) return RespStep::Execute;
  if (psn_before(p.h.psn, epsn_)) return RespStep::Duplicate;
  return RespStep::OutOfSequence;
}

// P_Key check (IBA 10.9.3): the base values match and one side at least is
// a full member.
bool IbaQp::pkey_matches(uint16_t pkey) const {
  const uint16_t own = verbs::kDefaultPkey;  // the one P_Key table entry (ibv_query_pkey)
  return (pkey & 0x7FFF) == (own & 0x7FFF) && ((pkey | own) & 0x8000) != 0;
}

int IbaQp::read_atomic_queued() const {
  return static_cast<int>(
      std::count_if(responses_.begin(), responses_.end(), [](const Response& r) { return r.kind != Response::Ack; }));
}

void IbaQp::receive(const IbaParsed& p, std::span<const std::byte> payload, const IbaSource& src) {
  if (state_ == IBV_QPS_RESET || state_ == IBV_QPS_INIT || state_ == IBV_QPS_ERR) return;  // silently dropped
  if (!pkey_matches(p.h.pkey)) {
    ++stats_.pkey_violations;  // silently dropped (and counted, as the port's P_Key violation counter)
    return;
  }
  const uint8_t op = p.h.opcode;
  if (op == CNP) {
    on_cnp();
    return;
  }
  if (src.ecn_ce) congestion_experienced();
  if (type() == IBV_QPT_UD) {
    respond_ud(p, payload, src);
    return;
  }
  const uint8_t kind = op & 0x1F;
  const bool response = kind >= (RC_RDMA_READ_RESPONSE_FIRST & 0x1F) && kind <= (RC_ATOMIC_ACKNOWLEDGE & 0x1F);
  if (type() == IBV_QPT_RC && response) {
    if (state_ != IBV_QPS_RTS) return;
    if (op == RC_ACKNOWLEDGE) {
      if (is_nak(p.h.syndrome) || is_rnr_nak(p.h.syndrome))
        on_nak(p);
      else
        on_ack(p);
    } else if (op == RC_ATOMIC_ACKNOWLEDGE) {
      on_atomic_ack(p);
    } else {
      on_read_response(p, payload);
    }
    return;
  }
  respond(p, payload, src);
}

void IbaQp::queue_ack(uint32_t psn) {
  // Coalesce: an ACK still waiting to go out is overtaken by the newer one.
  if (!responses_.empty() && responses_.back().kind == Response::Ack && responses_.back().syndrome == kAckSyndrome) {
    responses_.back().psn = psn;
    responses_.back().msn = msn_;
  } else {
    responses_.push_back({Response::Ack, psn, kAckSyndrome, msn_});
  }
  nic_.wake(*this);
}

void IbaQp::queue_nak(uint32_t psn, uint8_t syndrome) {
  responses_.push_back({Response::Ack, psn, syndrome, msn_});
  nak_sent_ = true;
  nic_.wake(*this);
}

void IbaQp::respond_duplicate(const IbaParsed& p) {
  ++stats_.duplicates;
  const uint8_t kind = p.h.opcode & 0x1F;
  if (p.h.opcode == RC_RDMA_READ_REQUEST) {
    // IBA 9.7.5.1.3: a duplicate READ is executed again from its PSN. The
    // requester went back to that PSN and asks again for everything after
    // it: READ data still queued from there on is dropped rather than sent
    // twice (rxe restarts its READ resource the same way).
    std::erase_if(responses_, [&](const Response& r) {
      return r.kind == Response::ReadData && psn_diff(r.psn, p.h.psn) >= 0;
    });
    const MemoryRegion* mr = remote_region(p, IBV_ACCESS_REMOTE_READ, p.h.dma_len);
    if (!mr && p.h.dma_len != 0) return;
    responses_.push_back({Response::ReadData, p.h.psn, kAckSyndrome, msn_, p.h.va, p.h.dma_len, p.h.dma_len, mr});
    nic_.wake(*this);
    return;
  }
  if (kind == (RC_COMPARE_SWAP & 0x1F) || kind == (RC_FETCH_ADD & 0x1F)) {
    // Atomics must not execute twice: replay the saved result (9.7.5.1.4).
    for (const AtomicReplay& r : atomic_replay_) {
      if (r.psn == p.h.psn) {
        responses_.push_back({Response::AtomicAck, r.psn, kAckSyndrome, msn_, r.orig});
        nic_.wake(*this);
      }
    }
    return;
  }
  if (type() == IBV_QPT_RC) queue_ack(psn_add(epsn_, -1));
}

bool IbaQp::place_recv(std::span<const std::byte> payload) {
  if (recv_offset_ + payload.size() > recv_.length || !scatter(recv_.sges, recv_offset_, payload)) return false;
  recv_offset_ += payload.size();
  return true;
}

// The region `p`'s R_Key names, when it is valid, in this QP's PD, grants
// `access` and covers `len` bytes from the VA (IBA 10.6.3.2); else nullptr.
const MemoryRegion* IbaQp::remote_region(const IbaParsed& p, int access, uint64_t len) const {
  const MemoryRegion* mr = device_.mr_by_rkey(p.h.rkey);
  if (!mr || mr->pd != &pd_ || !(mr->access & access) || !mr->contains(p.h.va, len)) return nullptr;
  return mr;
}

// A class C responder error (IBA 9.9.3.1.3): on RC the NAK, then the QP goes
// to ERR and its receives are flushed; UC drops the message (9.8.3).
void IbaQp::class_c_error(const IbaParsed& p, uint8_t syndrome) {
  if (type() == IBV_QPT_RC) {
    queue_nak(p.h.psn, syndrome);
    enter_error();
    return;
  }
  in_msg_ = InMessage::None;
}

void IbaQp::respond(const IbaParsed& p, std::span<const std::byte> payload, const IbaSource& src) {
  (void)src;
  const bool rc = type() == IBV_QPT_RC;
  const uint8_t op = p.h.opcode & 0x1F;  // the operation, RC and UC alike
  const auto& info = kIbaOps[p.h.opcode];

  // 1. PSN (IBA 9.7.5.1.1).
  switch (check_psn(p)) {
    case RespStep::Execute:
      break;
    case RespStep::Duplicate:
      if (rc) respond_duplicate(p);
      return;
    case RespStep::OutOfSequence:
      if (rc) {
        if (!nak_sent_) {
          ++stats_.seq_naks_sent;
          queue_nak(epsn_, kNakSeqError);
        }
        return;
      }
      // UC (9.8.3): a gap drops the message in progress; resynchronise on this packet.
      if (in_msg_ == InMessage::Send && recv_active_) give_back_recv(std::move(recv_));
      recv_active_ = false;
      in_msg_ = InMessage::None;
      epsn_ = p.h.psn;
      break;
    case RespStep::Drop:
      return;
  }

  // 2. Opcode sequence (9.7.5.1.2 / table 36).
  const bool send = info.any(iba_op::kSend);
  const bool write = info.any(iba_op::kWrite);
  const bool first = info.any(iba_op::kFirst) || info.any(iba_op::kOnly);
  const bool last = info.any(iba_op::kLast) || info.any(iba_op::kOnly);
  const bool expect_middle = in_msg_ != InMessage::None;
  const bool fits = expect_middle ? (!first && ((in_msg_ == InMessage::Send && send) ||
                                                (in_msg_ == InMessage::Write && write)))
                                  : (first || op == (RC_RDMA_READ_REQUEST & 0x1F) || info.is(iba_op::kRequest | iba_op::kAtomic));
  if (!fits) {
    if (rc) {
      queue_nak(epsn_, kNakInvalidRequest);
      enter_error();
    } else {  // UC: drop until the next FIRST/ONLY
      in_msg_ = InMessage::None;
      epsn_ = psn_add(p.h.psn, 1);
    }
    return;
  }

  // 3. The QP enables the operation (rxe check_op_valid): on RC a class C
  // invalid request error, on UC the message is dropped.
  const bool read = p.h.opcode == RC_RDMA_READ_REQUEST;
  const bool atomic = info.is(iba_op::kRequest | iba_op::kAtomic);
  const unsigned needs = write ? IBV_ACCESS_REMOTE_WRITE : read ? IBV_ACCESS_REMOTE_READ
                        : atomic ? IBV_ACCESS_REMOTE_ATOMIC : 0;
  if ((attr_.qp_access_flags & needs) != needs) {
    class_c_error(p, kNakInvalidRequest);
    return;
  }
  // An R_Key violation (9.7.5.2.4, C9-88: not for zero-length transfers):
  // on RC a class C remote access error, on UC the message is dropped.
  auto remote_access_error = [&] { class_c_error(p, kNakRemoteAccess); };

  // Responder resources (9.7.5.1.3): no more READs and atomics queued than
  // max_dest_rd_atomic; one more is an invalid request.
  if ((read || atomic) && read_atomic_queued() >= std::max<int>(1, attr_.max_dest_rd_atomic)) {
    class_c_error(p, kNakInvalidRequest);
    return;
  }

  uint32_t psn_span = 1;
  if (send || (write && info.any(iba_op::kImmediate))) {
    // A SEND, or a WRITE with immediate at its last packet, consumes a receive WQE.
    const bool needs_wqe = send ? first : last;
    if (needs_wqe && !recv_active_) {
      if (!take_recv(recv_)) {
        // 9.7.5.2.8: receiver not ready; ask the requester to come back later.
        if (rc) {
          ++stats_.rnr_naks_sent;
          queue_nak(p.h.psn, static_cast<uint8_t>(0x20 | (attr_.min_rnr_timer & 0x1F)));
        }
        return;
      }
      recv_active_ = true;
      recv_offset_ = 0;
    }
  }

  if (send) {
    if (!place_recv(payload)) {
      // Too long for the receive buffer: local length error here, the requester
      // sees an invalid request (9.7.5.2.5).
      complete_recv(recv_, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, 0, false);
      recv_active_ = false;
      if (rc) queue_nak(p.h.psn, kNakInvalidRequest);
      enter_error();
      return;
    }
    in_msg_ = last ? InMessage::None : InMessage::Send;
  } else if (write) {
    if (first) {
      const MemoryRegion* mr = remote_region(p, IBV_ACCESS_REMOTE_WRITE, p.h.dma_len);
      if (!mr && p.h.dma_len != 0) {
        remote_access_error();
        return;
      }
      write_mr_ = mr;
      write_va_ = p.h.va;
      write_left_ = p.h.dma_len;
      write_len_ = p.h.dma_len;
    }
    if (payload.size() > write_left_) {
      class_c_error(p, kNakInvalidRequest);
      return;
    }
    if (!payload.empty()) std::memcpy(write_mr_->bytes(write_va_, payload.size()).data(), payload.data(), payload.size());
    write_va_ += payload.size();
    write_left_ -= payload.size();
    in_msg_ = last ? InMessage::None : InMessage::Write;
  } else if (read) {
    const MemoryRegion* mr = remote_region(p, IBV_ACCESS_REMOTE_READ, p.h.dma_len);
    if (!mr && p.h.dma_len != 0) {
      remote_access_error();
      return;
    }
    const uint32_t mtu = mtu_bytes();
    psn_span = std::max<uint32_t>(1, (p.h.dma_len + mtu - 1) / mtu);
    ++msn_;
    responses_.push_back({Response::ReadData, p.h.psn, kAckSyndrome, msn_, p.h.va, p.h.dma_len, p.h.dma_len, mr});
    nic_.wake(*this);
  } else if (atomic) {
    const MemoryRegion* mr = remote_region(p, IBV_ACCESS_REMOTE_ATOMIC, 8);
    if (!mr) {
      remote_access_error();
      return;
    }
    if (p.h.va % 8 != 0) {  // 9.4.5: atomics need a naturally aligned 64-bit operand
      class_c_error(p, kNakInvalidRequest);
      return;
    }
    uint64_t value;
    std::byte* at = mr->bytes(p.h.va, 8).data();
    std::memcpy(&value, at, 8);
    const uint64_t orig = value;
    if (p.h.opcode == RC_COMPARE_SWAP) {
      if (value == p.h.compare) value = p.h.swap_add;
    } else {
      value += p.h.swap_add;
    }
    std::memcpy(at, &value, 8);
    atomic_replay_.push_back({p.h.psn, orig});
    if (atomic_replay_.size() > 16) atomic_replay_.pop_front();
    ++msn_;
    responses_.push_back({Response::AtomicAck, p.h.psn, kAckSyndrome, msn_, orig});
    nic_.wake(*this);
  }

  // 4. Accepted: advance the expected PSN and finish the message.
  epsn_ = psn_add(epsn_, psn_span);
  nak_sent_ = false;
  if ((send || write) && last) {
    ++msn_;
    if (send || info.any(iba_op::kImmediate)) {
      const ibv_wc_opcode wop = send ? IBV_WC_RECV : IBV_WC_RECV_RDMA_WITH_IMM;
      // byte_len: the bytes placed; for WRITE with immediate the RETH DMA length (as rxe and mlx5).
      const uint32_t len = send ? static_cast<uint32_t>(recv_offset_) : write_len_;
      complete_recv(recv_, IBV_WC_SUCCESS, wop, len, htonl(p.h.imm), info.any(iba_op::kImmediate), 0, false, 0, 0,
                    p.h.solicited);
      recv_active_ = false;
    }
  }
  if (rc && p.h.ack_req && (send || write)) {
    ++stats_.acks_sent;
    queue_ack(p.h.psn);
  }
}

void IbaQp::respond_ud(const IbaParsed& p, std::span<const std::byte> payload, const IbaSource& src) {
  const auto& info = kIbaOps[p.h.opcode];
  if (!info.any(iba_op::kSend) || !info.any(iba_op::kOnly)) return;
  // IBA 10.2.5: a Q_Key that does not match drops the datagram silently.
  if (p.h.qkey != attr_.qkey) return;
  if (!take_recv(recv_)) return;  // UD has no RNR: the datagram is lost
  recv_offset_ = 0;
  // The first 40 bytes of a UD receive buffer get the GRH (IBA 11.4.1.1),
  // or what stands for it (the fabric's decap says what).
  if (!place_recv(src.grh) || !place_recv(payload)) {
    complete_recv(recv_, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, 0, false, p.h.src_qp, src.has_grh, src.slid, src.sl);
    return;
  }
  complete_recv(recv_, IBV_WC_SUCCESS, IBV_WC_RECV, static_cast<uint32_t>(recv_offset_), htonl(p.h.imm),
                info.any(iba_op::kImmediate), p.h.src_qp, src.has_grh, src.slid, src.sl, p.h.solicited);
}

Packet IbaQp::next_response() {
  Response& r = responses_.front();
  IbaHeaders h;
  h.dest_qp = attr_.dest_qp_num;
  h.psn = r.psn;
  h.syndrome = r.syndrome;
  h.msn = r.msn;
  Packet p = nic_.alloc();
  if (r.kind == Response::Ack) {
    h.opcode = RC_ACKNOWLEDGE;
    iba_emit(p, h);
    responses_.pop_front();
  } else if (r.kind == Response::AtomicAck) {
    h.opcode = RC_ATOMIC_ACKNOWLEDGE;
    h.orig = r.va;
    iba_emit(p, h);
    responses_.pop_front();
  } else {
    const uint32_t mtu = mtu_bytes();
    const uint32_t n = std::min(mtu, r.left);
    const bool first = r.left == r.total;
    const bool last = n == r.left;
    h.opcode = first && last ? RC_RDMA_READ_RESPONSE_ONLY
               : first       ? RC_RDMA_READ_RESPONSE_FIRST
               : last        ? RC_RDMA_READ_RESPONSE_LAST
                             : RC_RDMA_READ_RESPONSE_MIDDLE;
    if (n) std::memcpy(p.push_back(n).data(), r.mr->bytes(r.va, n).data(), n);
    iba_emit(p, h);
    r.va += n;
    r.left -= n;
    r.psn = psn_add(r.psn, 1);
    if (last) responses_.pop_front();
  }
  fabric_.encap(p, attr_.ah_attr, qpn_, attr_.dest_qp_num);
  return p;
}

}  // namespace rdmasim
