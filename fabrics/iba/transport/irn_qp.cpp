// IRN loss recovery in the IBA queue pair (Mittal et al., "Revisiting
// Network Support for RDMA", SIGCOMM 2018), with loss_recovery: irn on RC:
//  - requester: BDP-FC caps the unacknowledged packets; in loss recovery the
//    packets the SACKs show missing are sent again, one at a time, before
//    new ones; RTO_low / RTO_high replace the IBA local ACK timeout;
//  - responder: a packet beyond the expected PSN is placed at once (a
//    WRITE by the RETH IRN adds to every packet, a SEND into the receive
//    WQE its recv_WQE_SN names, at its offset) and answered by a NACK that
//    carries the expected PSN and its own (a SACK); completions stay in
//    order: when the expected PSN reaches placed packets, their messages
//    complete as if they had just arrived.
// The sender's and receiver's bookkeeping is loss_recovery/irn.hpp; the
// wire format of IRN's additions is fabrics/ip/wire/irn_option.hpp.
#include <algorithm>
#include <cstring>
#include <tuple>

#include "fabrics/iba/opcodes.hpp"
#include "fabrics/iba/transport/iba_qp.hpp"
#include "fabrics/iba/transport/psn.hpp"
#include "fabrics/iba/transport/qp_common.hpp"

namespace rdmasim {

using namespace iba_qp;
using verbs::MemoryRegion;
using verbs::RecvWqe;
using verbs::SendWqe;

// At RTR the responder's side is needed (a QP may only receive); at RTS the
// sender's starts from the send queue's PSN.
void IbaQp::irn_start() {
  const IrnConfig& c = *fabric_.irn();
  const uint32_t bdp = irn_bdp_packets(c, nic_.port().params().rate, mtu_bytes());
  if (!irn_)
    irn_ = std::make_unique<IrnQp>(c, bdp, req_.psn);
  else
    irn_->sender = IrnSender(c, bdp, req_.psn);
}

// ------------------------------------------------------------- requester

bool IbaQp::irn_blocks_new() const { return !irn_->sender.may_send_new(req_.psn); }

bool IbaQp::irn_has_retransmit() const {
  return !irn_->read_asks.empty() || irn_->sender.next_retransmit().has_value();
}

Time IbaQp::irn_rto() const { return irn_->sender.rto(req_.high_psn); }

// What IRN adds to a SEND or WRITE packet (section 5.2).
std::optional<IrnExt> IbaQp::irn_ext(const SendWqe& w, uint64_t offset, bool write) const {
  IrnExt e;
  e.kind = write ? IrnExt::Write : IrnExt::Send;
  e.sn = takes_recv(w) ? w.recv_sn : 0;
  e.offset = static_cast<uint32_t>(offset);
  if (write) {
    e.va = w.remote_addr + offset;
    e.rkey = w.rkey;
    e.dma_len = static_cast<uint32_t>(w.length);
  }
  return e;
}

// The packet at the next PSN to send again, built as it was the first time
// (the requester's cursor is put back afterwards). A READ is asked again
// for the rest of its data in one request, which covers its PSNs.
Packet IbaQp::irn_retransmit() {
  if (!irn_->read_asks.empty()) return irn_read_ask();
  const uint32_t psn = *irn_->sender.next_retransmit();
  const uint32_t mtu = mtu_bytes();
  for (size_t i = 0; i < sq_.size() && sq_[i].started; ++i) {
    const SendWqe& w = sq_[i];
    if (psn_before(w.last_psn, psn)) continue;
    if (psn_before(psn, w.first_psn)) break;
    const auto cursor = std::tuple(req_.wqe, req_.offset, req_.psn);
    uint32_t span = 1;
    req_.wqe = i;
    if (is_read(w)) {
      req_.offset = w.done_bytes;
      req_.psn = psn_add(w.first_psn, static_cast<int64_t>(w.done_bytes / mtu));
      span = static_cast<uint32_t>(psn_diff(w.last_psn, psn)) + 1;
    } else if (is_atomic(w)) {
      req_.offset = 0;
      req_.psn = w.first_psn;
    } else {
      req_.offset = static_cast<uint64_t>(psn_diff(psn, w.first_psn)) * mtu;
      req_.psn = psn;
    }
    req_.noack_pkts = kMaxPacketsPerAck + 1;  // AckReq: the sender wants to hear of it soon
    Packet p = build_request();
    if (sending()) std::tie(req_.wqe, req_.offset, req_.psn) = cursor;
    irn_->sender.retransmitted(psn, span);
    return p;
  }
  irn_->sender.retransmitted(psn);  // acknowledged meanwhile: nothing holds it
  return Packet{};
}

// ------------------------------------------------------------- completer

// An IRN NACK (section 3.1): everything before its PSN is acknowledged, the
// PSN in its extension header selectively so; the sender enters recovery.
// Unlike a go-back-N sequence error it spends no retry: NACKs are how IRN
// works, not a failure.
void IbaQp::irn_on_nack(const IbaParsed& p, const IrnExt& e) {
  ++stats_.seq_naks_received;
  ack_through(p.h.psn);
  irn_->sender.on_nack(comp_.unacked_psn, e.sn & kPsnMask, req_.high_psn);
  if (sending() && requester_ready()) nic_.wake(*this);
}

void IbaQp::irn_on_cumulative() {
  irn_->sender.on_cumulative(comp_.unacked_psn);
  if (sending() && requester_ready()) nic_.wake(*this);
}

void IbaQp::irn_on_timeout() {
  irn_->sender.on_timeout(req_.high_psn);  // a READ is asked again for all of its rest
  irn_->read_asks.clear();
  for (IrnReadRx& r : irn_->reads) r.asked_end = r.first;
  if (sending()) nic_.wake(*this);
}

void IbaQp::irn_restart(uint32_t psn) { irn_->sender.restart_from(psn); }

// --------------------------------------------------------- READ responses

// A response of a READ beyond the PSN it expects (IRN section 5.3), of the
// READ at the head of the send queue or one behind it: placed at the offset
// its PSN gives, and the PSNs of that READ it skipped are asked for again.
void IbaQp::irn_read_beyond(SendWqe& w, const IbaParsed& p, const Payload& payload, uint32_t expected) {
  if (psn_diff(w.last_psn, p.h.psn) < 0 || psn_before(p.h.psn, expected))
    return;  // not this READ's, or a duplicate
  IrnReadRx& rd = irn_->read(w.first_psn, packets_of(w));
  if (rd.got.test(p.h.psn)) return;  // placed already
  const uint32_t mtu = mtu_bytes();
  const uint64_t offset = static_cast<uint64_t>(psn_diff(p.h.psn, w.first_psn)) * mtu;
  if (payload.size() != std::min<uint64_t>(mtu, w.length - offset)) return;  // not a response of this READ
  if (!scatter(w.sges, offset, payload)) {
    fail_front(IBV_WC_LOC_PROT_ERR);
    return;
  }
  rd.got.set(p.h.psn);
  if (rd.ask_holes(expected, p.h.psn, irn_->read_asks) && sending()) nic_.wake(*this);
}

// An ACK or response beyond the READ came while it still expects
// responses: the ones not placed are lost, and asked for again.
void IbaQp::irn_read_missing(const SendWqe& w, uint32_t expected) {
  IrnReadRx& rd = irn_->read(w.first_psn, packets_of(w));
  if (rd.ask_holes(expected, psn_add(w.last_psn, 1), irn_->read_asks) && sending()) nic_.wake(*this);
}

// The READ's expected response is here (or it just reached the head of the
// send queue): the ones placed after it count as arrived.
void IbaQp::irn_read_placed(SendWqe& w) {
  const IrnReadRx* rd = irn_->read(w.first_psn);
  if (!rd) return;
  const uint32_t mtu = mtu_bytes();
  while (w.done_bytes < w.length || w.length == 0) {
    const uint32_t psn = psn_add(w.first_psn, static_cast<int64_t>(w.done_bytes / mtu));
    if (!rd->got.test(psn)) break;
    w.done_bytes += std::min<uint64_t>(mtu, w.length - w.done_bytes);
    comp_.unacked_psn = psn_add(psn, 1);
    if (w.length == 0) break;
  }
}

// A READ request for one hole: the READ's own PSN, address and R_Key from
// the hole's first PSN, for the hole's bytes only.
Packet IbaQp::irn_read_ask() {
  const IrnReadAsk a = irn_->read_asks.front();
  irn_->read_asks.pop_front();
  size_t i = 0;
  while (i < sq_.size() && sq_[i].started && !(is_read(sq_[i]) && sq_[i].first_psn == a.read)) ++i;
  if (i == sq_.size() || !sq_[i].started) return Packet{};  // that READ is done (or failed) meanwhile
  const SendWqe& w = sq_[i];
  const uint32_t mtu = mtu_bytes();
  const uint32_t expected = psn_add(w.first_psn, static_cast<int64_t>(w.done_bytes / mtu));
  if (!psn_before(expected, a.end)) return Packet{};  // it came meanwhile
  const uint32_t psn = psn_before(a.psn, expected) ? expected : a.psn;
  const auto cursor = std::tuple(req_.wqe, req_.offset, req_.psn);
  req_.wqe = i;
  req_.offset = static_cast<uint64_t>(psn_diff(psn, w.first_psn)) * mtu;
  req_.psn = psn;
  irn_->read_ask_len =
      static_cast<uint32_t>(std::min<uint64_t>(w.length - req_.offset, uint64_t{mtu} * psn_diff(a.end, psn)));
  req_.noack_pkts = kMaxPacketsPerAck + 1;
  Packet p = build_request();
  irn_->read_ask_len = 0;
  if (sending()) std::tie(req_.wqe, req_.offset, req_.psn) = cursor;
  return p;
}

// ------------------------------------------------------------- responder

// A request beyond the expected PSN. Placed, it is answered by a NACK with
// the expected PSN and a SACK of its own. A READ or atomic, a packet the
// checks below refuse, or one beyond the bitmap is dropped unanswered: the
// SACKs of later packets show it missing, and when it comes again in order
// the in-order path runs every check and sends any error.
RespStep IbaQp::irn_out_of_order(const RespPacket& r) {
  const uint32_t psn = r.p.h.psn;
  if (!irn_->rx) irn_->rx.emplace(irn_->sender.bdp_packets(), resp_.epsn);
  IrnReceiver& rx = *irn_->rx;
  rx.received.advance_to(resp_.epsn);
  if (rx.received.test(psn)) {
    ++stats_.duplicates;
    return RespStep::Done;
  }
  if (!irn_place(r)) return RespStep::Done;
  rx.received.set(psn);
  ++stats_.seq_naks_sent;
  resp_.responses.push_back({Response::Ack, resp_.epsn, kNakSeqError, resp_.msn, uint64_t{psn} + 1});
  nic_.wake(*this);
  return RespStep::Done;
}

// The in-order path's checks that one packet can pass alone (length,
// access, R_Key, room in the receive WQE), then its bytes where they go.
bool IbaQp::irn_place(const RespPacket& r) {
  const IrnExt* e = r.irn;
  const uint32_t psn = r.p.h.psn;
  if (!e || !(r.send || r.write) || !irn_->rx->received.in_window(psn)) return false;
  const size_t n = r.payload.size(), mtu = mtu_bytes();
  if (!(r.first && r.last ? n <= mtu : r.last ? n > 0 && n <= mtu : n == mtu)) return false;
  IrnSlot s;
  s.opcode = r.p.h.opcode;
  s.solicited = r.p.h.solicited;
  s.bytes = static_cast<uint32_t>(n);
  s.offset = e->offset;
  s.imm = r.p.h.imm;
  // The receive WQE its recv_WQE_SN names: the one a SEND is filling, or
  // one posted and not yet taken. A shared receive queue's are not this
  // QP's to reserve.
  const RecvWqe* wqe = nullptr;
  if (r.send || (r.imm && r.last)) {
    if (init_.srq) return false;
    if (resp_.recv_active && e->sn + 1 == resp_.recv_sn) {
      wqe = &resp_.recv;
    } else {
      const int64_t k = int64_t{e->sn} - resp_.recv_sn;
      if (k < 0 || k >= static_cast<int64_t>(rq_.size())) return false;
      wqe = &rq_[static_cast<size_t>(k)];
    }
  }
  if (r.write) {
    if (e->kind != IrnExt::Write || !(attr_.qp_access_flags & IBV_ACCESS_REMOTE_WRITE)) return false;
    if (uint64_t{e->offset} + n > e->dma_len) return false;
    IbaParsed msg = r.p;  // the message's RETH, as its first packet carries it
    msg.h.va = e->va - e->offset;
    msg.h.rkey = e->rkey;
    const MemoryRegion* mr = remote_region(msg, IBV_ACCESS_REMOTE_WRITE, e->dma_len);
    if (!mr && e->dma_len != 0) return false;
    if (n) mr->write(e->va, r.payload);
    s.va = e->va;
    s.dma_len = e->dma_len;
    s.mr = mr;
  } else {
    if (e->kind != IrnExt::Send || e->offset + n > wqe->length || !scatter(wqe->sges, e->offset, r.payload))
      return false;
  }
  irn_->rx->slot(psn) = s;
  return true;
}

// The expected PSN has reached packets placed out of order: each goes
// through what the in-order path does after placing (the opcode sequence,
// taking the receive WQE, completing its message), then one cumulative ACK.
void IbaQp::irn_advance() {
  if (!irn_->rx) return;
  IrnReceiver& rx = *irn_->rx;
  rx.received.advance_to(resp_.epsn);
  bool moved = false;
  while ((sending() || state_ == IBV_QPS_RTR) && rx.received.test(resp_.epsn)) {
    const IrnSlot s = rx.slot(resp_.epsn);
    IbaParsed parsed;
    parsed.h.opcode = s.opcode;
    parsed.h.psn = resp_.epsn;
    parsed.h.imm = s.imm;
    parsed.h.solicited = s.solicited;
    RespPacket r(parsed, {});
    if (check_op_sequence(r) != RespStep::CheckOpValid) return;  // a class C error, as in order
    const bool takes = r.send ? r.first : r.imm && r.last;
    if (takes) {
      if (!take_recv(resp_.recv)) {  // it was posted when the packet was placed
        enter_error();
        return;
      }
      resp_.recv_active = true;
      resp_.recv_offset = 0;
      ++resp_.recv_sn;
    }
    if (r.send) {
      resp_.recv_offset = uint64_t{s.offset} + s.bytes;
      resp_.in_msg = r.last ? InMessage::None : InMessage::Send;
    } else {
      if (r.first) {
        resp_.write_mr = s.mr;
        resp_.write_len = s.dma_len;
      }
      resp_.write_va = s.va + s.bytes;
      resp_.write_left = s.dma_len - s.offset - s.bytes;
      resp_.in_msg = r.last ? InMessage::None : InMessage::Write;
    }
    complete(r);
    rx.received.advance_to(resp_.epsn);
    moved = true;
  }
  if (moved) {
    ++stats_.acks_sent;
    queue_ack(psn_add(resp_.epsn, -1));
  }
}

}  // namespace rdmasim
