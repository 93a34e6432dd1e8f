// The queue pair as a whole: creation, the state machine's effects on the
// three roles, the NIC's view (TxSource), congestion control's seam, and the dispatch of
// arriving packets to the completer (responses) or the responder (requests).
// The roles themselves: requester.cpp, completer.cpp, responder.cpp.
#include "fabrics/iba/transport/iba_qp.hpp"

#include <cstring>

#include "fabrics/iba/opcodes.hpp"
#include "fabrics/iba/transport/loss_recovery/loss_recovery.hpp"
#include "fabrics/iba/transport/psn.hpp"
#include "fabrics/iba/transport/qp_common.hpp"

namespace rdmasim {

using namespace iba_qp;

IbaQp::IbaQp(verbs::Device& d, verbs::ProtectionDomain& pd, uint32_t qpn, const verbs::QpInitAttr& init,
             Rnic& nic, IbaFabric& fabric)
    : QueuePair(d, pd, qpn, init),
      nic_(nic),
      fabric_(fabric),
      retry_timer_(nic.sim(), this, [](void* qp) { static_cast<IbaQp*>(qp)->on_retry_timeout(); }),
      fb_(fabric.feedback()),
      recovery_(&go_back_n()) {
  if (fabric.congestion_control() && init.qp_type != IBV_QPT_UD)
    cc_ = make_congestion_control(*fabric.congestion_control(), nic.sim(), nic.port().params().rate, this,
                                  [](const void* qp) {
                                    auto* q = static_cast<const IbaQp*>(qp);
                                    return !q->sq_.empty() || !q->resp_.responses.empty();
                                  });
  paced_source_ = cc_ != nullptr;
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
    resp_.epsn = attr_.rq_psn & kPsnMask;
  }
  if (state_ == IBV_QPS_RTS && from == IBV_QPS_RTR) {
    req_.psn = comp_.unacked_psn = req_.high_psn = attr_.sq_psn & kPsnMask;
    comp_.retry_left = attr_.retry_cnt;
    comp_.rnr_left = attr_.rnr_retry;
    if (cc_) cc_->set_mtu(mtu_bytes());
    connect_loss_recovery();
    if (!sq_.empty()) nic_.wake(*this);
  } else if (state_ == IBV_QPS_RTR) {
    connect_loss_recovery();
  } else if (state_ == IBV_QPS_RTS && from != IBV_QPS_RTS && !sq_.empty()) {
    nic_.wake(*this);  // back from SQD or SQE: the send queue goes on
  }
  if (state_ == IBV_QPS_SQD && from == IBV_QPS_RTS) {
    // The drain (IBA 10.3.1): the messages already started are sent whole
    // (and again, when lost); none after them starts.
    req_.drain_psn = req_.psn;
    for (size_t i = 0; i < sq_.size() && sq_[i].started; ++i) req_.drain_psn = psn_add(sq_[i].last_psn, 1);
    if (psn_before(req_.drain_psn, req_.high_psn)) req_.drain_psn = req_.high_psn;
  }
  if (state_ == IBV_QPS_SQE) {  // the send queue is about to be flushed
    req_.wqe = 0;
    req_.offset = 0;
  }
  if (state_ == IBV_QPS_ERR || state_ == IBV_QPS_RESET) {
    retry_timer_.stop();
    nic_.sim().cancel(rnr_timer_);
    // A NAK the responder queued before the error still goes out (it tells
    // the requester why); nothing else does.
    resp_.responses.remove_if([&](const Response& r) {
      return state_ == IBV_QPS_RESET || r.kind != Response::Ack || !is_nak(r.syndrome);
    });
    req_.wqe = 0;
    req_.offset = 0;
    req_.rd_atomic_in_flight = 0;
    comp_.retrying = false;
    resp_.in_msg = InMessage::None;
    // A receive a SEND was filling is flushed with the others (IBA 10.3.1).
    if (resp_.recv_active && state_ == IBV_QPS_ERR) rq_.push_front(std::move(resp_.recv));
    resp_.recv_active = false;
  }
}

// At RTR (a QP may only receive) and at RTS (the sender's side starts from
// the send queue's PSN): the loss recovery the fabric runs, when it is not
// IBA's go-back-N, is made once and told where the QP stands.
void IbaQp::connect_loss_recovery() {
  if (!own_recovery_) {
    own_recovery_ = make_loss_recovery(fabric_.irn(), type());
    if (!own_recovery_) return;
    recovery_ = own_recovery_.get();
  }
  recovery_->connected(*this);
}

void IbaQp::send_posted() {
  if (cc_) cc_->busy();
  if (state_ == IBV_QPS_RTS) nic_.wake(*this);
}

void IbaQp::recv_posted() {}

uint32_t IbaQp::packets_of(const SendWqe& w) const {
  if (is_atomic(w) || type() == IBV_QPT_UD) return 1;
  const uint64_t mtu = mtu_bytes();
  return static_cast<uint32_t>(std::max<uint64_t>(1, (w.length + mtu - 1) / mtu));
}

// The NIC asks for frames: responses (ACKs, READ data) go before new requests.
bool IbaQp::has_tx() const { return !resp_.responses.empty() || requester_ready(); }

Packet IbaQp::next_frame() {
  const bool data = resp_.responses.empty() || resp_.responses.front().kind == Response::ReadData;
  Packet p = resp_.responses.empty() ? next_request() : next_response();
  if (cc_ && data && p) pace(p.size());
  return p;
}

// ------------------------------------------------------ congestion control

// The QP's data frames (requests, READ responses) keep to its rate; ACKs go
// when they can.
Time IbaQp::not_before() const {
  if (!cc_ || !cc_->pacing_rate()) return Time{};
  if (!resp_.responses.empty() && resp_.responses.front().kind != Response::ReadData) return Time{};
  return next_send_;
}

void IbaQp::pace(size_t frame_bytes) {
  cc_->busy();  // a responder sending READ data was idle as far as posts go
  cc_->on_sent(frame_bytes);
  const auto rate = cc_->pacing_rate();
  if (!rate) return;
  const Time now = nic_.sim().now();
  next_send_ = std::max(now, next_send_) + rate->tx_time(nic_.port().wire_bytes(frame_bytes));
}

verbs::QueuePair::SendLimits IbaQp::send_limits() const {
  SendLimits l;
  l.rate_bps = nic_.port().params().rate.bps();
  if (!cc_) return l;
  if (auto r = cc_->pacing_rate()) l.rate_bps = r->bps();
  if (auto w = cc_->window()) l.window_bytes = *w;
  return l;
}

// A window algorithm's limit: a request may go while the unacknowledged
// bytes are below the window (one packet always may, so that a window
// below one packet still sends, paced).
bool IbaQp::window_allows() const {
  if (!cc_ || sent_bytes_ == 0) return true;
  const auto w = cc_->window();
  return !w || sent_bytes_ < *w;
}

void IbaQp::track_sent(uint32_t psn, uint32_t bytes) {
  if (!cc_) return;
  const bool retx = psn_before(psn, req_.high_psn);
  // One packet sent again alone (IRN) keeps its place, and Karn's rule holds for it.
  if (retx && recovery_->resends_in_place()) {
    for (size_t i = 0; i < sent_.size(); ++i) {
      const Sent s = sent_[i];
      const int32_t at = psn_diff(psn, s.psn);
      if (at < 0 || at >= static_cast<int32_t>(s.count) || s.retransmitted) continue;
      // Split the run around the packet: [s.psn, psn), psn, (psn, end).
      const auto before = static_cast<uint32_t>(at), after = s.count - before - 1;
      sent_[i] = {psn, 1, s.bytes, true, s.at};
      if (before) insert_sent(i++, {s.psn, before, s.bytes, false, s.at});
      if (after) insert_sent(i + 1, {psn_add(psn, 1), after, s.bytes, false, s.at});
      break;
    }
    return;
  }
  const Time now = nic_.sim().now();
  sent_bytes_ += bytes;
  if (!sent_.empty()) {
    Sent& last = sent_.back();
    if (last.bytes == bytes && last.retransmitted == retx && psn_add(last.psn, last.count) == psn &&
        (!fb_.rtt_samples || last.at == now)) {
      ++last.count;
      return;
    }
  }
  sent_.push_back({psn, 1, bytes, retx, now});
}

// A run put in at index i of sent_ (IRN's retransmission splits one).
void IbaQp::insert_sent(size_t i, const Sent& s) {
  sent_.push_back(s);
  for (size_t j = sent_.size() - 1; j > i; --j) std::swap(sent_[j], sent_[j - 1]);
}

// Go-back-N: what is sent again from `psn` on is counted again when it goes.
void IbaQp::forget_sent_from(uint32_t psn) {
  while (!sent_.empty()) {
    Sent& last = sent_.back();
    const int32_t keep = psn_diff(psn, last.psn);
    if (keep >= static_cast<int32_t>(last.count)) break;
    const uint32_t gone = keep <= 0 ? last.count : last.count - static_cast<uint32_t>(keep);
    sent_bytes_ -= uint64_t{gone} * last.bytes;
    if (keep > 0) {
      last.count -= gone;
      break;
    }
    sent_.pop_back();
  }
}

// A response arrived (after the completer took it): what it acknowledged
// leaves the in-flight count, and the algorithm hears of it.
void IbaQp::cc_response(const IbaParsed& p, const IbaSource& src) {
  if (!cc_) return;
  CcAck a;
  a.now = nic_.sim().now();
  a.psn = p.h.psn;
  a.next_psn = req_.psn;
  a.ecn_echo = p.h.becn;
  while (!sent_.empty() && psn_before(sent_.front().psn, comp_.unacked_psn)) {
    Sent& s = sent_.front();
    const int32_t acked =
        std::min<int32_t>(psn_diff(comp_.unacked_psn, s.psn), static_cast<int32_t>(s.count));
    // Karn: a retransmitted packet's ACK says nothing about the RTT.
    const int32_t at = psn_diff(p.h.psn, s.psn);
    if (fb_.rtt_samples && at >= 0 && at < acked && !s.retransmitted) a.rtt = a.now - s.at;
    a.acked_bytes += uint64_t{static_cast<uint32_t>(acked)} * s.bytes;
    a.acked_packets += acked;
    sent_bytes_ -= uint64_t{static_cast<uint32_t>(acked)} * s.bytes;
    if (static_cast<uint32_t>(acked) < s.count) {
      s.psn = psn_add(s.psn, acked);
      s.count -= static_cast<uint32_t>(acked);
      break;
    }
    sent_.pop_front();
  }
  if (src.hop_limit >= 0) {
    const int initial = attr_.ah_attr.grh.hop_limit ? attr_.ah_attr.grh.hop_limit : 64;
    a.hops = std::max(0, initial - src.hop_limit);
  }
  if (src.telemetry && src.telemetry_echo) a.telemetry = &*src.telemetry;
  a.endpoint_delay = nic_.config().rx_pipeline * 2;  // the request's at the responder, the ACK's here
  cc_->on_ack(a);
  if (sending() && requester_ready()) nic_.wake(*this);
}

// A request goes out with room for the switches' telemetry when the
// algorithm reads it.
void IbaQp::encap_request(Packet& p, const std::optional<IrnExt>& ext) {
  if (ext)
    fabric_.encap_irn(p, attr_.ah_attr, qpn_, attr_.dest_qp_num, *ext);
  else if (fb_.request_telemetry)
    fabric_.encap_telemetry(p, attr_.ah_attr, qpn_, attr_.dest_qp_num, IntStack{}, false);
  else
    fabric_.encap(p, attr_.ah_attr, qpn_, attr_.dest_qp_num);
}

// Notification point: a packet for this QP arrived marked CE. Its sender
// hears of it by a CNP, at most one per cnp_interval (the paper's N).
void IbaQp::congestion_experienced() {
  const CcConfig* cfg = fabric_.congestion_control();
  if (!cfg || type() == IBV_QPT_UD) return;
  const Time now = nic_.sim().now();
  if (cnp_sent_ && now - last_cnp_ < cfg->dcqcn.cnp_interval) return;
  cnp_sent_ = true;
  last_cnp_ = now;
  Packet p = nic_.alloc(kCnpReservedLen);
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
  if (cc_) cc_->on_cnp();
}

void IbaQp::receive(const IbaParsed& p, const Payload& payload, const IbaSource& src) {
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
  const uint8_t kind = op & 0x1F;
  const bool response = type() == IBV_QPT_RC && kind >= (RC_RDMA_READ_RESPONSE_FIRST & 0x1F) &&
                        kind <= (RC_ATOMIC_ACKNOWLEDGE & 0x1F);
  // Congestion feedback is about the data this QP receives (requests, and
  // READ responses, which the peer's rate paces), never about an
  // acknowledgement: a CE-marked ACK would otherwise make the requester
  // send the responder a CNP (or a BECN) for congestion its data never
  // met. DCQCN's notification point reacts to marked data packets (Zhu et
  // al. 2015, section 3.1; HPCC's simulator flags CNPs only in the ACKs of
  // CE-marked data, rdma-hw.cc ReceiveUdp).
  const bool ack = op == RC_ACKNOWLEDGE || op == RC_ATOMIC_ACKNOWLEDGE;
  if (!ack) {
    if (src.ecn_ce && fb_.cnp_on_ce) congestion_experienced();
    if ((src.ecn_ce && fb_.becn_on_ce) || (p.h.fecn && fb_.becn_on_fecn)) resp_.echo_becn = true;
    if (fb_.echo_telemetry && src.telemetry && !src.telemetry_echo) resp_.echo_telemetry = src.telemetry;
  }
  if (type() == IBV_QPT_UD) {
    respond_ud(p, payload, src);
    return;
  }
  if (response) {
    if (!sending()) return;
    if (op == RC_ACKNOWLEDGE) {
      if (is_nak(p.h.syndrome) || is_rnr_nak(p.h.syndrome))
        on_nak(p, src.irn ? &*src.irn : nullptr);
      else
        on_ack(p);
    } else if (op == RC_ATOMIC_ACKNOWLEDGE) {
      on_atomic_ack(p);
    } else {
      on_read_response(p, payload);
    }
    recovery_->after_response(*this);
    cc_response(p, src);
    return;
  }
  respond(p, payload, src.irn ? &*src.irn : nullptr);
}

}  // namespace rdmasim
