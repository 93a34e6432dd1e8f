#include "fabrics/iba/transport/loss_recovery/irn_recovery.hpp"

#include <algorithm>
#include <tuple>

#include "fabrics/iba/transport/psn.hpp"
#include "fabrics/iba/transport/qp_common.hpp"

namespace rdmasim {

using namespace iba_qp;
using verbs::MemoryRegion;
using verbs::RecvWqe;

// The sender's bookkeeping is sized at connected(), once the path MTU is known.
IrnRecovery::IrnRecovery(const IrnConfig& c) : cfg_(c), sender_(c, 1, 0) {}

// At RTR the responder's side is needed (a QP may only receive); at RTS the
// sender's starts from the send queue's PSN.
void IrnRecovery::connected(IbaQp& qp) {
  const uint32_t bdp = irn_bdp_packets(cfg_, qp.nic_.port().params().rate, qp.mtu_bytes());
  sender_ = IrnSender(cfg_, bdp, qp.req_.psn);
  retry_spent_at_ = qp.nic_.sim().now();
}

// ------------------------------------------------------------- requester

bool IrnRecovery::has_retransmit(const IbaQp&) const {
  return !read_asks_.empty() || sender_.next_retransmit().has_value();
}

// BDP-FC (section 3.2).
bool IrnRecovery::may_send_new(const IbaQp& qp) const { return sender_.may_send_new(qp.req_.psn); }

// A message that takes a receive WQE gets the recv_WQE_SN the responder
// counts the same way (section 5.2); going back, it takes the same one again.
void IrnRecovery::message_started(SendWqe& w) {
  if (takes_recv(w)) w.recv_sn = next_recv_sn_++;
}

void IrnRecovery::message_restarts(const SendWqe& w) {
  if (takes_recv(w)) --next_recv_sn_;
}

// What IRN adds to a SEND or WRITE packet (section 5.2).
std::optional<IrnExt> IrnRecovery::request_extension(const SendWqe& w, uint64_t offset, bool write) const {
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

// Go-back-N was forced (a READ response went missing, an RNR wait).
void IrnRecovery::went_back(uint32_t psn) { sender_.restart_from(psn); }

Packet IrnRecovery::retransmit(IbaQp& qp) {
  if (!read_asks_.empty()) return ask_read_hole(qp);
  return resend_packet(qp, *sender_.next_retransmit());
}

// The packet at `psn`, built as it was the first time. A READ is asked
// again for the rest of its data in one request, which covers its PSNs.
Packet IrnRecovery::resend_packet(IbaQp& qp, uint32_t psn) {
  const uint32_t mtu = qp.mtu_bytes();
  for (size_t i = 0; i < qp.sq_.size() && qp.sq_[i].started; ++i) {
    const SendWqe& w = qp.sq_[i];
    if (psn_before(w.last_psn, psn)) continue;
    if (psn_before(psn, w.first_psn)) break;
    uint32_t span = 1;
    Packet p;
    if (is_read(w)) {
      span = static_cast<uint32_t>(psn_diff(w.last_psn, psn)) + 1;
      p = build_again(qp, i, w.done_bytes, qp.next_response_psn(w));
    } else if (is_atomic(w)) {
      p = build_again(qp, i, 0, w.first_psn);
    } else {
      p = build_again(qp, i, static_cast<uint64_t>(psn_diff(psn, w.first_psn)) * mtu, psn);
    }
    sender_.retransmitted(psn, span);
    return p;
  }
  sender_.retransmitted(psn);  // acknowledged meanwhile: nothing holds it
  return Packet{};
}

// The request of send-queue entry `wqe` from byte `offset`, at `psn`, with
// AckReq (the sender wants to hear of it soon); the requester's cursor is
// put back afterwards.
Packet IrnRecovery::build_again(IbaQp& qp, size_t wqe, uint64_t offset, uint32_t psn, uint32_t read_bytes) {
  auto& req = qp.req_;
  const auto cursor = std::tuple(req.wqe, req.offset, req.psn);
  req.wqe = wqe;
  req.offset = offset;
  req.psn = psn;
  req.noack_pkts = kMaxPacketsPerAck + 1;
  Packet p = qp.build_request(read_bytes);
  if (qp.sending()) std::tie(req.wqe, req.offset, req.psn) = cursor;
  return p;
}

// A READ request for one hole (section 5.3): the READ's own PSN, address and
// R_Key from the hole's first PSN, for the hole's bytes only.
Packet IrnRecovery::ask_read_hole(IbaQp& qp) {
  const IrnReadAsk a = read_asks_.front();
  read_asks_.pop_front();
  const auto& sq = qp.sq_;
  size_t i = 0;
  while (i < sq.size() && sq[i].started && !(is_read(sq[i]) && sq[i].first_psn == a.read)) ++i;
  if (i == sq.size() || !sq[i].started) return Packet{};  // that READ is done (or failed) meanwhile
  const SendWqe& w = sq[i];
  const uint32_t mtu = qp.mtu_bytes();
  const uint32_t expected = qp.next_response_psn(w);
  if (!psn_before(expected, a.end)) return Packet{};  // it came meanwhile
  const uint32_t psn = psn_before(a.psn, expected) ? expected : a.psn;
  const uint64_t offset = static_cast<uint64_t>(psn_diff(psn, w.first_psn)) * mtu;
  const auto bytes =
      static_cast<uint32_t>(std::min<uint64_t>(w.length - offset, uint64_t{mtu} * psn_diff(a.end, psn)));
  return build_again(qp, i, offset, psn, bytes);
}

// ------------------------------------------------------------- completer

Time IrnRecovery::retry_timeout(const IbaQp& qp) const { return sender_.rto(qp.req_.high_psn); }

// IRN's RTO_low and RTO_high (section 3.1) are how it recovers the tail of a
// window, not the IBA local ACK timeout (9.7.6.1.3): they retransmit without
// spending retry_cnt. A retry is spent once per local ACK timeout without
// forward progress, so an IRN QP gives up after as long a stall as a
// go-back-N QP with the same attributes. A READ is asked again for all of
// its rest.
bool IrnRecovery::timed_out(IbaQp& qp) {
  const Time now = qp.nic_.sim().now();
  if (now - retry_spent_at_ >= ack_timeout(qp.attr_.timeout)) {
    if (!qp.spend_retry()) return false;
    retry_spent_at_ = now;
  }
  sender_.on_timeout(qp.req_.high_psn);
  read_asks_.clear();
  for (IrnReadRx& r : reads_) r.asked_end = r.first;
  if (qp.sending()) qp.nic_.wake(qp);
  return true;
}

void IrnRecovery::forward_progress(IbaQp& qp) { retry_spent_at_ = qp.nic_.sim().now(); }

// An IRN NACK (section 3.1): everything before its PSN is acknowledged, the
// PSN in its extension header selectively so; the sender enters recovery.
// Unlike a go-back-N sequence error it spends no retry: NACKs are how IRN
// works, not a failure. A NAK without a SACK is go-back-N's.
void IrnRecovery::sequence_nak(IbaQp& qp, const IbaParsed& p, const IrnExt* ext) {
  if (!ext || ext->kind != IrnExt::Sack) {
    go_back_n().sequence_nak(qp, p, ext);
    return;
  }
  ++qp.stats_.seq_naks_received;
  qp.ack_through(p.h.psn);
  sender_.on_nack(qp.comp_.unacked_psn, ext->sn & kPsnMask, qp.req_.high_psn);
  if (qp.sending() && qp.requester_ready()) qp.nic_.wake(qp);
}

void IrnRecovery::after_response(IbaQp& qp) {
  sender_.on_cumulative(qp.comp_.unacked_psn);
  if (qp.sending() && qp.requester_ready()) qp.nic_.wake(qp);
}

// --------------------------------------------------------- READ responses

IrnReadRx* IrnRecovery::read(uint32_t first) {
  for (IrnReadRx& r : reads_)
    if (r.first == first) return &r;
  return nullptr;
}

IrnReadRx& IrnRecovery::read(uint32_t first, uint32_t packets) {
  if (IrnReadRx* r = read(first)) return *r;
  return reads_.emplace_back(first, packets);
}

// An ACK or response beyond the READ came while it still expects
// responses: the ones not placed are lost, and asked for again (section 5.3).
void IrnRecovery::read_responses_missing(IbaQp& qp, SendWqe& w, uint32_t expected) {
  IrnReadRx& rd = read(w.first_psn, qp.packets_of(w));
  if (rd.ask_holes(expected, psn_add(w.last_psn, 1), read_asks_) && qp.sending()) qp.nic_.wake(qp);
}

// A response of a READ beyond the PSN it expects (section 5.3), of the READ
// at the head of the send queue or one behind it: placed at the offset its
// PSN gives, and the PSNs of that READ it skipped are asked for again.
void IrnRecovery::read_response_beyond(IbaQp& qp, SendWqe& w, const IbaParsed& p, const Payload& payload,
                                       uint32_t expected) {
  if (psn_diff(w.last_psn, p.h.psn) < 0 || psn_before(p.h.psn, expected))
    return;  // not this READ's, or a duplicate
  IrnReadRx& rd = read(w.first_psn, qp.packets_of(w));
  if (rd.got.test(p.h.psn)) return;  // placed already
  const uint32_t mtu = qp.mtu_bytes();
  const uint64_t offset = static_cast<uint64_t>(psn_diff(p.h.psn, w.first_psn)) * mtu;
  if (payload.size() != std::min<uint64_t>(mtu, w.length - offset)) return;  // not a response of this READ
  if (!qp.scatter(w.sges, offset, payload)) {
    qp.fail_front(IBV_WC_LOC_PROT_ERR);
    return;
  }
  rd.got.set(p.h.psn);
  if (rd.ask_holes(expected, p.h.psn, read_asks_) && qp.sending()) qp.nic_.wake(qp);
}

void IrnRecovery::read_response_behind_head(IbaQp& qp, const IbaParsed& p, const Payload& payload) {
  for (size_t i = 1; i < qp.sq_.size() && qp.sq_[i].started; ++i) {
    SendWqe& w = qp.sq_[i];
    if (!is_read(w) || psn_before(p.h.psn, w.first_psn) || psn_before(w.last_psn, p.h.psn)) continue;
    read_response_beyond(qp, w, p, payload, qp.next_response_psn(w));
    return;
  }
}

// The READ's expected response is here (or it just reached the head of the
// send queue): the ones placed after it count as arrived.
void IrnRecovery::read_at_head(IbaQp& qp, SendWqe& w) {
  const IrnReadRx* rd = read(w.first_psn);
  if (!rd) return;
  const uint32_t mtu = qp.mtu_bytes();
  while (w.done_bytes < w.length || w.length == 0) {
    const uint32_t psn = psn_add(w.first_psn, static_cast<int64_t>(w.done_bytes / mtu));
    if (!rd->got.test(psn)) break;
    w.done_bytes += std::min<uint64_t>(mtu, w.length - w.done_bytes);
    qp.comp_.unacked_psn = psn_add(psn, 1);
    if (w.length == 0) break;
  }
}

void IrnRecovery::read_completed(uint32_t first_psn) {
  std::erase_if(reads_, [&](const IrnReadRx& r) { return r.first == first_psn; });
  std::erase_if(read_asks_, [&](const IrnReadAsk& a) { return a.read == first_psn; });
}

// ------------------------------------------------------------- responder

// A request beyond the expected PSN. Placed, it is answered by a NACK with
// the expected PSN and a SACK of its own. A READ or atomic, a packet the
// checks below refuse, or one beyond the bitmap is dropped unanswered: the
// SACKs of later packets show it missing, and when it comes again in order
// the in-order path runs every check and sends any error.
RespStep IrnRecovery::out_of_sequence(IbaQp& qp, const RespPacket& r) {
  const uint32_t psn = r.p.h.psn;
  auto& resp = qp.resp_;
  if (!rx_) rx_.emplace(sender_.bdp_packets(), resp.epsn);
  rx_->received.advance_to(resp.epsn);
  if (rx_->received.test(psn)) {
    ++qp.stats_.duplicates;
    return RespStep::Done;
  }
  if (!place(qp, r)) return RespStep::Done;
  rx_->received.set(psn);
  ++qp.stats_.seq_naks_sent;
  resp.responses.push_back({IbaQp::Response::Ack, resp.epsn, kNakSeqError, resp.msn, uint64_t{psn} + 1});
  qp.nic_.wake(qp);
  return RespStep::Done;
}

// The in-order path's checks that one packet can pass alone (length,
// access, R_Key, room in the receive WQE), then its bytes where they go.
bool IrnRecovery::place(IbaQp& qp, const RespPacket& r) {
  const IrnExt* e = r.ext;
  const uint32_t psn = r.p.h.psn;
  if (!e || !(r.send || r.write) || !rx_->received.in_window(psn)) return false;
  const size_t n = r.payload.size(), mtu = qp.mtu_bytes();
  if (!(r.first && r.last ? n <= mtu : r.last ? n > 0 && n <= mtu : n == mtu)) return false;
  IrnSlot s;
  s.opcode = r.p.h.opcode;
  s.solicited = r.p.h.solicited;
  s.bytes = static_cast<uint32_t>(n);
  s.offset = e->offset;
  s.imm = r.p.h.imm;
  const RecvWqe* wqe = nullptr;
  if (r.send || (r.imm && r.last)) {
    wqe = named_receive(qp, *e);
    if (!wqe) return false;
  }
  if (r.write) {
    if (!place_write(qp, r, s)) return false;
  } else if (e->kind != IrnExt::Send || e->offset + n > wqe->length ||
             !qp.scatter(wqe->sges, e->offset, r.payload)) {
    return false;
  }
  rx_->slot(psn) = s;
  return true;
}

// The receive WQE a recv_WQE_SN names: the one a SEND is filling, or one
// posted and not yet taken. A shared receive queue's are not this QP's to
// reserve.
const RecvWqe* IrnRecovery::named_receive(const IbaQp& qp, const IrnExt& e) const {
  if (qp.init_.srq) return nullptr;
  if (qp.resp_.recv_active && e.sn + 1 == recv_sn_) return &qp.resp_.recv;
  const int64_t k = int64_t{e.sn} - recv_sn_;
  if (k < 0 || k >= static_cast<int64_t>(qp.rq_.size())) return nullptr;
  return &qp.rq_[static_cast<size_t>(k)];
}

// A WRITE packet lands by the RETH its extension header repeats, checked as
// the message's first packet would be (IBA 9.7.5.2.4).
bool IrnRecovery::place_write(IbaQp& qp, const RespPacket& r, IrnSlot& s) {
  const IrnExt& e = *r.ext;
  const size_t n = r.payload.size();
  if (e.kind != IrnExt::Write || !(qp.attr_.qp_access_flags & IBV_ACCESS_REMOTE_WRITE)) return false;
  if (uint64_t{e.offset} + n > e.dma_len) return false;
  IbaParsed msg = r.p;  // the message's RETH, as its first packet carries it
  msg.h.va = e.va - e.offset;
  msg.h.rkey = e.rkey;
  const MemoryRegion* mr = qp.remote_region(msg, IBV_ACCESS_REMOTE_WRITE, e.dma_len);
  if (!mr && e.dma_len != 0) return false;
  if (n) mr->write(e.va, r.payload);
  s.va = e.va;
  s.dma_len = e.dma_len;
  s.mr = mr;
  return true;
}

// The expected PSN has reached packets placed out of order: each goes
// through what the in-order path does after placing, then one cumulative ACK.
void IrnRecovery::after_request(IbaQp& qp) {
  if (!rx_) return;
  rx_->received.advance_to(qp.resp_.epsn);
  bool moved = false;
  while ((qp.sending() || qp.state_ == IBV_QPS_RTR) && rx_->received.test(qp.resp_.epsn)) {
    const IrnSlot s = rx_->slot(qp.resp_.epsn);
    if (!complete_placed(qp, s)) return;
    rx_->received.advance_to(qp.resp_.epsn);
    moved = true;
  }
  if (moved) {
    ++qp.stats_.acks_sent;
    qp.queue_ack(psn_add(qp.resp_.epsn, -1));
  }
}

// The packet placed at the expected PSN: the opcode sequence, taking the
// receive WQE, completing its message, as in order. False when it cannot
// (a class C error, as in order; no receive WQE: the QP fails).
bool IrnRecovery::complete_placed(IbaQp& qp, const IrnSlot& s) {
  auto& resp = qp.resp_;
  IbaParsed parsed;
  parsed.h.opcode = s.opcode;
  parsed.h.psn = resp.epsn;
  parsed.h.imm = s.imm;
  parsed.h.solicited = s.solicited;
  RespPacket r(parsed, {});
  if (qp.check_op_sequence(r) != RespStep::CheckOpValid) return false;
  const bool takes = r.send ? r.first : r.imm && r.last;
  if (takes) {
    if (!qp.take_recv(resp.recv)) {  // it was posted when the packet was placed
      qp.enter_error();
      return false;
    }
    resp.recv_active = true;
    resp.recv_offset = 0;
    ++recv_sn_;
  }
  if (r.send) {
    resp.recv_offset = uint64_t{s.offset} + s.bytes;
    resp.in_msg = r.last ? IbaQp::InMessage::None : IbaQp::InMessage::Send;
  } else {
    if (r.first) {
      resp.write_mr = s.mr;
      resp.write_len = s.dma_len;
    }
    resp.write_va = s.va + s.bytes;
    resp.write_left = s.dma_len - s.offset - s.bytes;
    resp.in_msg = r.last ? IbaQp::InMessage::None : IbaQp::InMessage::Write;
  }
  qp.complete(r);
  return true;
}

}  // namespace rdmasim
