// The requester (IBA 9.7.2..9.7.4): turns send-queue WQEs into request
// packets, segmented at the path MTU, with PSNs, AckReq and fences; goes
// back to a PSN when the completer says so.
#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

#include "fabrics/iba/opcodes.hpp"
#include "fabrics/iba/transport/iba_qp.hpp"
#include "fabrics/iba/transport/loss_recovery/loss_recovery.hpp"
#include "fabrics/iba/transport/psn.hpp"
#include "fabrics/iba/transport/qp_common.hpp"

namespace rdmasim {

using namespace iba_qp;
using verbs::MemoryRegion;
using verbs::SendWqe;

bool IbaQp::requester_ready() const {
  if (!sending() || req_.rnr_wait) return false;
  if (recovery_->has_retransmit(*this)) return true;
  if (req_.wqe >= sq_.size()) return false;
  if (state_ == IBV_QPS_SQD && !psn_before(req_.psn, req_.drain_psn)) return false;  // nothing new starts
  if (!window_allows()) return false;                 // an ACK wakes the QP again
  if (!recovery_->may_send_new(*this)) return false;  // IRN: BDP-FC
  const SendWqe& w = sq_[req_.wqe];
  // IBA 9.7.2: no more RDMA READ / atomic requests in flight than max_rd_atomic.
  if ((is_read(w) || is_atomic(w)) && req_.offset == 0 && !w.started &&
      req_.rd_atomic_in_flight >= std::max<int>(1, attr_.max_rd_atomic))
    return false;
  // IBV_SEND_FENCE (IBA 10.8.3.3): wait until every READ and atomic before it has completed.
  if ((w.send_flags & IBV_SEND_FENCE) && req_.offset == 0 && !w.started)
    for (size_t i = 0; i < req_.wqe; ++i)
      if (is_read(sq_[i]) || is_atomic(sq_[i])) return false;
  return true;
}

// The payload of `w` from `offset` on, into `dst` (bytes of p). An RC
// requester's buffer is the NIC's until the work completes, which needs the
// responder's ACK: a payload from one SGE is deferred (core/packet.hpp),
// read when the responder places it or a capture shows it.
bool IbaQp::copy_out(const SendWqe& w, uint64_t offset, Packet& p, std::span<std::byte> dst,
                     ibv_wc_status& err) {
  if (!w.inline_data.empty() || (w.send_flags & IBV_SEND_INLINE)) {
    std::memcpy(dst.data(), w.inline_data.data() + offset, dst.size());
    return true;
  }
  if (type() == IBV_QPT_RC && !dst.empty()) {
    if (const Payload src = source(w.sges, offset, dst.size()); !src.empty()) {
      p.defer(dst, src);
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
  Packet p = too_long ? Packet{} : nic_.alloc(w.length);
  IbaHeaders h;
  h.opcode = w.opcode == IBV_WR_SEND_WITH_IMM ? UD_SEND_ONLY_IMM : UD_SEND_ONLY;
  h.solicited = w.send_flags & IBV_SEND_SOLICITED;
  h.dest_qp = w.remote_qpn;
  h.psn = req_.psn;
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
  req_.psn = psn_add(req_.psn, 1);
  // UD completes when the datagram leaves: nothing will acknowledge it.
  SendWqe done = std::move(sq_.front());
  sq_.pop_front();
  complete_send(done, IBV_WC_SUCCESS);
  return p;
}

Packet IbaQp::next_request() {
  if (recovery_->has_retransmit(*this)) return recovery_->retransmit(*this);
  return build_request();
}

Packet IbaQp::build_request(uint32_t read_bytes) {
  SendWqe& w = sq_[req_.wqe];
  if (type() == IBV_QPT_UD) return next_ud_request(w);

  const uint32_t mtu = mtu_bytes();
  if (!w.started || req_.offset == 0) {
    if (!w.started) {
      w.started = true;
      w.first_psn = req_.psn;
      w.last_psn = psn_add(req_.psn, packets_of(w) - 1);
      if (is_read(w) || is_atomic(w)) ++req_.rd_atomic_in_flight;
      recovery_->message_started(w);
    }
  }

  IbaHeaders h;
  h.dest_qp = attr_.dest_qp_num;
  h.psn = req_.psn;
  h.solicited = (w.send_flags & IBV_SEND_SOLICITED) != 0;
  const bool rc = type() == IBV_QPT_RC;
  const uint8_t base = rc ? 0x00 : 0x20;  // RC or UC opcode space (IBA 9.2.1)
  Packet p = nic_.alloc(mtu);
  std::optional<IrnExt> ext;

  if (is_read(w)) {
    // One request for the rest of the data (a retried READ resumes mid-way).
    h.opcode = RC_RDMA_READ_REQUEST;
    h.va = w.remote_addr + req_.offset;
    h.rkey = w.rkey;
    h.dma_len = static_cast<uint32_t>(w.length - req_.offset);
    if (read_bytes) h.dma_len = read_bytes;
    h.ack_req = ask_for_ack(true);
    iba_emit(p, h);
    if (psn_before(req_.psn, req_.high_psn)) ++stats_.retransmitted_packets;
    req_.psn = psn_add(w.last_psn, 1);
    req_.offset = 0;
    ++req_.wqe;
  } else if (is_atomic(w)) {
    h.opcode = w.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? RC_COMPARE_SWAP : RC_FETCH_ADD;
    h.va = w.remote_addr;
    h.rkey = w.rkey;
    h.swap_add = w.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? w.swap : w.compare_add;
    h.compare = w.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? w.compare_add : 0;
    h.ack_req = ask_for_ack(true);
    iba_emit(p, h);
    req_.psn = psn_add(req_.psn, 1);
    ++req_.wqe;
  } else {
    const uint64_t n = std::min<uint64_t>(mtu, w.length - req_.offset);
    const bool first = req_.offset == 0;
    const bool last = req_.offset + n >= w.length;
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
    ext = recovery_->request_extension(w, req_.offset, write);
    ibv_wc_status err = IBV_WC_SUCCESS;
    if (!copy_out(w, req_.offset, p, p.push_back(n), err)) {
      fail_front(err);
      return Packet{};
    }
    iba_emit(p, h);
    if (psn_before(req_.psn, req_.high_psn)) ++stats_.retransmitted_packets;
    req_.psn = psn_add(req_.psn, 1);
    req_.offset += n;
    if (last) {
      req_.offset = 0;
      ++req_.wqe;
    }
  }
  encap_request(p, ext);
  if (rc) track_sent(h.psn, static_cast<uint32_t>(p.size()));

  if (!rc) {  // UC: complete once the last packet is on its way
    if (req_.wqe > 0 && req_.offset == 0) {
      SendWqe done = std::move(sq_.front());
      sq_.pop_front();
      --req_.wqe;
      complete_send(done, IBV_WC_SUCCESS);
    }
  } else if (!retry_timer_.armed()) {
    arm_retry_timer();
  }
  if (psn_before(req_.high_psn, req_.psn)) req_.high_psn = req_.psn;
  return p;
}

// AckReq (IBA 9.2.3): on the last packet of every RC request, and after
// more than kMaxPacketsPerAck packets without one (rxe's
// RXE_MAX_PKT_PER_ACK), so a loss near the end of a long message is
// recovered from the last ACK, not from the message's start. IRN asks on
// every packet: BDP-FC stops the sender after a BDP of packets, fewer than
// kMaxPacketsPerAck, until an ACK frees the window.
bool IbaQp::ask_for_ack(bool last) {
  if (type() != IBV_QPT_RC) return false;
  const bool ask =
      last || fb_.ack_every_packet || recovery_->ack_every_packet() || req_.noack_pkts++ > kMaxPacketsPerAck;
  if (ask) req_.noack_pkts = 0;
  return ask;
}

// Go-back-N (IBA 9.7.6.1.2): resend everything from `psn` on. Until
// something new is acknowledged, further signs that `psn` is missing are the
// same loss seen again, not a reason for another retry.
void IbaQp::go_back_to(uint32_t psn) {
  forget_sent_from(psn);
  recovery_->went_back(psn);
  comp_.retrying = true;
  comp_.retry_psn = psn;
  for (size_t i = 0; i < sq_.size(); ++i) {
    SendWqe& w = sq_[i];
    if (!w.started) break;
    if (psn_diff(psn, w.last_psn) > 0) continue;
    const int32_t k = std::max(0, psn_diff(psn, w.first_psn));
    req_.wqe = i;
    req_.psn = psn_add(w.first_psn, k);
    req_.offset = static_cast<uint64_t>(k) * mtu_bytes();
    if (is_read(w)) req_.offset = std::max<uint64_t>(req_.offset, w.done_bytes);
    if (is_atomic(w)) req_.offset = 0;
    for (size_t j = i + 1; j < sq_.size(); ++j) {
      if (!sq_[j].started) break;
      if (is_read(sq_[j]) || is_atomic(sq_[j])) --req_.rd_atomic_in_flight;
      recovery_->message_restarts(sq_[j]);
      sq_[j].started = false;
      sq_[j].done_bytes = 0;
    }
    if (sending()) nic_.wake(*this);
    return;
  }
}

}  // namespace rdmasim
