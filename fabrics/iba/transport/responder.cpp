// The responder (IBA 9.7.5): a request passes named checks in rxe's order
// (PSN, opcode sequence, operation enabled, resources, length, R_Key),
// then executes and is acknowledged; duplicates are answered again, UD
// datagrams placed. Also the packets it sends back (ACK/NAK, READ
// responses, atomic ACKs).
#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <utility>

#include "fabrics/iba/opcodes.hpp"
#include "fabrics/iba/transport/iba_qp.hpp"
#include "fabrics/iba/transport/loss_recovery/loss_recovery.hpp"
#include "fabrics/iba/transport/psn.hpp"
#include "fabrics/iba/transport/qp_common.hpp"

namespace rdmasim {

using namespace iba_qp;
using verbs::MemoryRegion;
using verbs::SendWqe;

// P_Key check (IBA 10.9.3): the base values match and one side at least is
// a full member.
bool IbaQp::pkey_matches(uint16_t pkey) const {
  const uint16_t own = verbs::kDefaultPkey;  // the one P_Key table entry (ibv_query_pkey)
  return (pkey & 0x7FFF) == (own & 0x7FFF) && ((pkey | own) & 0x8000) != 0;
}

int IbaQp::read_atomic_queued() const {
  return static_cast<int>(std::count_if(resp_.responses.begin(), resp_.responses.end(),
                                        [](const Response& r) { return r.kind != Response::Ack; }));
}

void IbaQp::queue_ack(uint32_t psn) {
  // Coalesce: an ACK still waiting to go out is overtaken by the newer one,
  // unless either echoes congestion (BECN): merged, two marked packets
  // would reach the sender as one marked ACK, and DCTCP's fraction of
  // marked packets (one ACK a packet in HPCC's simulator) would fall.
  const bool becn = std::exchange(resp_.echo_becn, false);
  if (!becn && !resp_.responses.empty() && resp_.responses.back().kind == Response::Ack &&
      resp_.responses.back().syndrome == kAckSyndrome && !resp_.responses.back().becn) {
    resp_.responses.back().psn = psn;
    resp_.responses.back().msn = resp_.msn;
  } else {
    Response r{Response::Ack, psn, kAckSyndrome, resp_.msn};
    r.becn = becn;
    resp_.responses.push_back(r);
  }
  nic_.wake(*this);
}

void IbaQp::queue_nak(uint32_t psn, uint8_t syndrome) {
  resp_.responses.push_back({Response::Ack, psn, syndrome, resp_.msn});
  resp_.nak_sent = true;
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
    // IRN asks for one hole at a time: only the data of that hole is
    // dropped, and the hole goes before READ data still queued behind it
    // (under go-back-N there is none: it was all dropped).
    const uint32_t packets = std::max<uint32_t>(1, (p.h.dma_len + mtu_bytes() - 1) / mtu_bytes());
    const int32_t span = recovery_->duplicate_read_span(packets);
    const auto resent = [&](const Response& r) {
      return r.kind == Response::ReadData && psn_diff(r.psn, p.h.psn) >= 0 && psn_diff(r.psn, p.h.psn) < span;
    };
    resp_.responses.remove_if(resent);
    const MemoryRegion* mr = remote_region(p, IBV_ACCESS_REMOTE_READ, p.h.dma_len);
    if (!mr && p.h.dma_len != 0) return;
    stats_.retransmitted_packets += packets;
    const Response again{Response::ReadData, p.h.psn, kAckSyndrome, resp_.msn, p.h.va, p.h.dma_len,
                         p.h.dma_len,        mr};
    Ring<Response>& q = resp_.responses;
    q.push_back(again);
    // Moved back to before the first READ data after it.
    size_t at = 0;
    while (at + 1 < q.size() && !(q[at].kind == Response::ReadData && psn_diff(q[at].psn, p.h.psn) > 0)) ++at;
    for (size_t i = q.size() - 1; i > at; --i) std::swap(q[i], q[i - 1]);
    nic_.wake(*this);
    return;
  }
  if (kind == (RC_COMPARE_SWAP & 0x1F) || kind == (RC_FETCH_ADD & 0x1F)) {
    // Atomics must not execute twice: replay the saved result (9.7.5.1.4).
    for (const AtomicReplay& r : resp_.atomic_replay) {
      if (r.psn == p.h.psn) {
        resp_.responses.push_back({Response::AtomicAck, r.psn, kAckSyndrome, resp_.msn, r.orig});
        nic_.wake(*this);
      }
    }
    return;
  }
  if (type() == IBV_QPT_RC) queue_ack(psn_add(resp_.epsn, -1));
}

bool IbaQp::place_recv(const Payload& payload) {
  if (resp_.recv_offset + payload.size() > resp_.recv.length ||
      !scatter(resp_.recv.sges, resp_.recv_offset, payload))
    return false;
  resp_.recv_offset += payload.size();
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
  drop_uc_message();
}

// UC drops the message in progress (9.8.3): a receive a SEND had taken is
// the next message's again, from its start.
void IbaQp::drop_uc_message() {
  if (resp_.in_msg == InMessage::Send && resp_.recv_active) give_back_recv(std::move(resp_.recv));
  resp_.recv_active = false;
  resp_.in_msg = InMessage::None;
}

void IbaQp::respond_ud(const IbaParsed& p, const Payload& payload, const IbaSource& src) {
  const auto& info = kIbaOps[p.h.opcode];
  if (!info.any(iba_op::kSend) || !info.any(iba_op::kOnly)) return;
  // IBA 10.2.5: a Q_Key that does not match drops the datagram silently.
  if (p.h.qkey != attr_.qkey) return;
  if (!take_recv(resp_.recv)) return;  // UD has no RNR: the datagram is lost
  resp_.recv_offset = 0;
  // The first 40 bytes of a UD receive buffer get the GRH (IBA 11.4.1.1),
  // or what stands for it (the fabric's decap says what).
  if (!place_recv(std::span<const std::byte>(src.grh)) || !place_recv(payload)) {
    complete_recv(resp_.recv, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, 0, false, p.h.src_qp, src.has_grh, src.slid,
                  src.sl);
    return;
  }
  complete_recv(resp_.recv, IBV_WC_SUCCESS, IBV_WC_RECV, static_cast<uint32_t>(resp_.recv_offset),
                htonl(p.h.imm), info.any(iba_op::kImmediate), p.h.src_qp, src.has_grh, src.slid, src.sl,
                p.h.solicited);
}

Packet IbaQp::next_response() {
  Response& r = resp_.responses.front();
  IbaHeaders h;
  h.dest_qp = attr_.dest_qp_num;
  h.psn = r.psn;
  h.syndrome = r.syndrome;
  h.msn = r.msn;
  Packet p = nic_.alloc(r.kind == Response::ReadData ? mtu_bytes() : 0);
  if (r.kind == Response::Ack) {
    h.opcode = RC_ACKNOWLEDGE;
    const uint64_t sack = r.va;  // IRN's NACK: the SACK PSN + 1
    // Congestion feedback for the requester's algorithm: BECN echoes a CE
    // mark (DCTCP) or a FECN (IB CCA, IBA A10.2.1.2); HPCC's telemetry
    // rides in the encapsulation.
    h.becn = r.becn || std::exchange(resp_.echo_becn, false);
    iba_emit(p, h);
    resp_.responses.pop_front();
    if (sack) {
      IrnExt e;
      e.kind = IrnExt::Sack;
      e.sn = static_cast<uint32_t>(sack - 1);
      fabric_.encap_irn(p, attr_.ah_attr, qpn_, attr_.dest_qp_num, e);
      return p;
    }
    if (resp_.echo_telemetry) {
      fabric_.encap_telemetry(p, attr_.ah_attr, qpn_, attr_.dest_qp_num, *resp_.echo_telemetry, true);
      return p;
    }
  } else if (r.kind == Response::AtomicAck) {
    h.opcode = RC_ATOMIC_ACKNOWLEDGE;
    h.orig = r.va;
    iba_emit(p, h);
    resp_.responses.pop_front();
  } else {
    const uint32_t mtu = mtu_bytes();
    const uint32_t n = std::min(mtu, r.left);
    const bool first = r.left == r.total;
    const bool last = n == r.left;
    h.opcode = first && last ? RC_RDMA_READ_RESPONSE_ONLY
               : first       ? RC_RDMA_READ_RESPONSE_FIRST
               : last        ? RC_RDMA_READ_RESPONSE_LAST
                             : RC_RDMA_READ_RESPONSE_MIDDLE;
    if (n) r.mr->read(r.va, n).copy_to(p.push_back(n));
    iba_emit(p, h);
    r.va += n;
    r.left -= n;
    r.psn = psn_add(r.psn, 1);
    if (last) resp_.responses.pop_front();
  }
  fabric_.encap(p, attr_.ah_attr, qpn_, attr_.dest_qp_num);
  return p;
}

// ---- the responder's steps (IBA 9.7.5; rxe's resp_states): each checks
// one thing and names the next step; a failed check queues its NAK.

const char* resp_step_name(RespStep s) {
  static constexpr const char* kNames[] = {"check_psn",
                                           "duplicate",
                                           "out_of_sequence",
                                           "check_op_sequence",
                                           "check_op_valid",
                                           "check_resources",
                                           "check_length",
                                           "check_rkey",
                                           "execute",
                                           "complete",
                                           "done"};
  static_assert(std::size(kNames) == static_cast<size_t>(RespStep::Done) + 1);
  return kNames[static_cast<size_t>(s)];
}

IbaQp::RespPacket::RespPacket(const IbaParsed& parsed, const Payload& bytes, const IrnExt* extension)
    : p(parsed), payload(bytes), ext(extension), info(kIbaOps[parsed.h.opcode]) {
  send = info.any(iba_op::kSend);
  write = info.any(iba_op::kWrite);
  read = parsed.h.opcode == RC_RDMA_READ_REQUEST;
  atomic = info.is(iba_op::kRequest | iba_op::kAtomic);
  first = info.any(iba_op::kFirst) || info.any(iba_op::kOnly);
  last = info.any(iba_op::kLast) || info.any(iba_op::kOnly);
  imm = info.any(iba_op::kImmediate);
}

void IbaQp::respond(const IbaParsed& p, const Payload& payload, const IrnExt* ext) {
  RespPacket r(p, payload, ext);
  RespStep s = RespStep::CheckPsn;
  while (s != RespStep::Done) s = resp_step(s, r);
  recovery_->after_request(*this);  // IRN: packets placed out of order may now complete
}

RespStep IbaQp::resp_step(RespStep s, RespPacket& r) {
  switch (s) {
    case RespStep::CheckPsn:
      return check_psn(r);
    case RespStep::Duplicate:
      return duplicate(r);
    case RespStep::OutOfSequence:
      return out_of_sequence(r);
    case RespStep::CheckOpSequence:
      return check_op_sequence(r);
    case RespStep::CheckOpValid:
      return check_op_valid(r);
    case RespStep::CheckResources:
      return check_resources(r);
    case RespStep::CheckLength:
      return check_length(r);
    case RespStep::CheckRkey:
      return check_rkey(r);
    case RespStep::Execute:
      return execute(r);
    case RespStep::Complete:
      return complete(r);
    case RespStep::Done:
      break;
  }
  return RespStep::Done;
}

// IBA 9.7.5.1.1: the PSN first.
RespStep IbaQp::check_psn(const RespPacket& r) const {
  if (r.p.h.psn == resp_.epsn) return RespStep::CheckOpSequence;
  return psn_before(r.p.h.psn, resp_.epsn) ? RespStep::Duplicate : RespStep::OutOfSequence;
}

RespStep IbaQp::duplicate(const RespPacket& r) {
  if (type() == IBV_QPT_RC) respond_duplicate(r.p);
  return RespStep::Done;
}

// RC: the loss recovery's answer (9.7.5.1.1: go-back-N NAKs the gap once;
// IRN places the packet and NACKs it with a SACK). UC (9.8.3): a gap drops
// the message in progress; resynchronise on this packet.
RespStep IbaQp::out_of_sequence(const RespPacket& r) {
  if (type() == IBV_QPT_RC) return recovery_->out_of_sequence(*this, r);
  drop_uc_message();
  resp_.epsn = r.p.h.psn;
  return RespStep::CheckOpSequence;
}

// 9.7.5.1.2 / table 36: a MIDDLE or LAST only inside a message of its kind,
// a FIRST, ONLY, READ or atomic only outside one.
RespStep IbaQp::check_op_sequence(const RespPacket& r) {
  const bool fits = resp_.in_msg != InMessage::None
                        ? !r.first && ((resp_.in_msg == InMessage::Send && r.send) ||
                                       (resp_.in_msg == InMessage::Write && r.write))
                        : r.first || r.read || r.atomic;
  if (fits) return RespStep::CheckOpValid;
  if (type() == IBV_QPT_RC) {
    queue_nak(resp_.epsn, kNakInvalidRequest);
    enter_error();
  } else {  // UC: drop until the next FIRST/ONLY
    drop_uc_message();
    resp_.epsn = psn_add(r.p.h.psn, 1);
  }
  return RespStep::Done;
}

// The QP enables the operation (rxe's check_op_valid): else on RC a class C
// invalid request error, on UC the message is dropped.
RespStep IbaQp::check_op_valid(const RespPacket& r) {
  const unsigned needs = r.write    ? IBV_ACCESS_REMOTE_WRITE
                         : r.read   ? IBV_ACCESS_REMOTE_READ
                         : r.atomic ? IBV_ACCESS_REMOTE_ATOMIC
                                    : 0;
  if ((attr_.qp_access_flags & needs) == needs) return RespStep::CheckResources;
  class_c_error(r.p, kNakInvalidRequest);
  return RespStep::Done;
}

// Responder resources (9.7.5.1.3): no more READs and atomics queued than
// max_dest_rd_atomic (one more is an invalid request); a SEND's first
// packet, or a WRITE with immediate's last, takes a receive WQE, and none
// posted is an RNR NAK (9.7.5.2.8).
RespStep IbaQp::check_resources(const RespPacket& r) {
  if ((r.read || r.atomic) && read_atomic_queued() >= std::max<int>(1, attr_.max_dest_rd_atomic)) {
    class_c_error(r.p, kNakInvalidRequest);
    return RespStep::Done;
  }
  const bool needs_wqe = r.send ? r.first : r.write && r.imm && r.last;
  if (!needs_wqe || resp_.recv_active) return RespStep::CheckLength;
  if (!take_recv(resp_.recv)) {
    if (type() == IBV_QPT_RC) {
      ++stats_.rnr_naks_sent;
      queue_nak(r.p.h.psn, static_cast<uint8_t>(0x20 | (attr_.min_rnr_timer & 0x1F)));
    }
    return RespStep::Done;
  }
  resp_.recv_active = true;
  resp_.recv_offset = 0;
  recovery_->receive_wqe_taken();
  return RespStep::CheckLength;
}

// Packet lengths (IBA 9.7.5.1, as rxe's check_length enforces them): a
// FIRST or MIDDLE carries exactly the path MTU, a LAST 1 to MTU bytes, an
// ONLY at most the MTU. Anything else is an invalid request.
RespStep IbaQp::check_length(const RespPacket& r) {
  if (r.send || r.write) {
    const size_t n = r.payload.size(), mtu = mtu_bytes();
    const bool ok = r.first && r.last ? n <= mtu : r.last ? n > 0 && n <= mtu : n == mtu;
    if (!ok) {
      class_c_error(r.p, kNakInvalidRequest);
      return RespStep::Done;
    }
  }
  return RespStep::CheckRkey;
}

// The R_Key (9.7.5.2.4; C9-88: not for zero-length transfers): else on RC a
// class C remote access error, on UC the message is dropped. Atomics also
// need a naturally aligned operand (9.4.5).
RespStep IbaQp::check_rkey(RespPacket& r) {
  const IbaHeaders& h = r.p.h;
  if (r.write && r.first) {
    r.mr = remote_region(r.p, IBV_ACCESS_REMOTE_WRITE, h.dma_len);
    if (!r.mr && h.dma_len != 0) return remote_access_error(r);
    resp_.write_mr = r.mr;
    resp_.write_va = h.va;
    resp_.write_left = h.dma_len;
    resp_.write_len = h.dma_len;
  } else if (r.read) {
    r.mr = remote_region(r.p, IBV_ACCESS_REMOTE_READ, h.dma_len);
    if (!r.mr && h.dma_len != 0) return remote_access_error(r);
  } else if (r.atomic) {
    r.mr = remote_region(r.p, IBV_ACCESS_REMOTE_ATOMIC, 8);
    if (!r.mr) return remote_access_error(r);
    if (h.va % 8 != 0) {
      class_c_error(r.p, kNakInvalidRequest);
      return RespStep::Done;
    }
  }
  return RespStep::Execute;
}

RespStep IbaQp::remote_access_error(const RespPacket& r) {
  class_c_error(r.p, kNakRemoteAccess);
  return RespStep::Done;
}

RespStep IbaQp::execute(RespPacket& r) {
  if (r.send) return execute_send(r);
  if (r.write) return execute_write(r);
  if (r.read) {
    const uint32_t mtu = mtu_bytes();
    r.psn_span = std::max<uint32_t>(1, (r.p.h.dma_len + mtu - 1) / mtu);
    ++resp_.msn;
    resp_.responses.push_back({Response::ReadData, r.p.h.psn, kAckSyndrome, resp_.msn, r.p.h.va,
                               r.p.h.dma_len, r.p.h.dma_len, r.mr});
    nic_.wake(*this);
  } else if (r.atomic) {
    execute_atomic(r);
  }
  return RespStep::Complete;
}

RespStep IbaQp::execute_send(const RespPacket& r) {
  if (!place_recv(r.payload)) {
    // Too long for the receive buffer: local length error here, the requester
    // sees an invalid request (9.7.5.2.5).
    complete_recv(resp_.recv, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, 0, false);
    resp_.recv_active = false;
    if (type() == IBV_QPT_RC) queue_nak(r.p.h.psn, kNakInvalidRequest);
    enter_error();
    return RespStep::Done;
  }
  resp_.in_msg = r.last ? InMessage::None : InMessage::Send;
  return RespStep::Complete;
}

RespStep IbaQp::execute_write(const RespPacket& r) {
  const size_t n = r.payload.size();
  if (n > resp_.write_left) {  // more than the RETH said
    class_c_error(r.p, kNakInvalidRequest);
    return RespStep::Done;
  }
  if (n) resp_.write_mr->write(resp_.write_va, r.payload);
  resp_.write_va += n;
  resp_.write_left -= n;
  resp_.in_msg = r.last ? InMessage::None : InMessage::Write;
  return RespStep::Complete;
}

// 9.4.5: compare-and-swap or fetch-and-add on the 64-bit word, once; the
// original value is kept for a duplicate to replay (9.7.5.1.4).
void IbaQp::execute_atomic(const RespPacket& r) {
  const IbaHeaders& h = r.p.h;
  uint64_t value;
  std::byte* at = r.mr->bytes(h.va, 8).data();
  std::memcpy(&value, at, 8);
  const uint64_t orig = value;
  if (h.opcode == RC_COMPARE_SWAP) {
    if (value == h.compare) value = h.swap_add;
  } else {
    value += h.swap_add;
  }
  std::memcpy(at, &value, 8);
  resp_.atomic_replay.push_back({h.psn, orig});
  if (resp_.atomic_replay.size() > 16) resp_.atomic_replay.pop_front();
  ++resp_.msn;
  resp_.responses.push_back({Response::AtomicAck, h.psn, kAckSyndrome, resp_.msn, orig});
  nic_.wake(*this);
}

// Accepted: advance the expected PSN, finish the message, acknowledge.
RespStep IbaQp::complete(const RespPacket& r) {
  resp_.epsn = psn_add(resp_.epsn, r.psn_span);
  resp_.nak_sent = false;
  if ((r.send || r.write) && r.last) {
    ++resp_.msn;
    message_placed();
    if (r.send || r.imm) {
      const ibv_wc_opcode wop = r.send ? IBV_WC_RECV : IBV_WC_RECV_RDMA_WITH_IMM;
      // byte_len: the bytes placed; for WRITE with immediate the RETH DMA length (as rxe and mlx5).
      const uint32_t len = r.send ? static_cast<uint32_t>(resp_.recv_offset) : resp_.write_len;
      complete_recv(resp_.recv, IBV_WC_SUCCESS, wop, len, htonl(r.p.h.imm), r.imm, 0, false, 0, 0,
                    r.p.h.solicited);
      resp_.recv_active = false;
    }
  }
  // IB CCA (A10.2.1.2): a FECN is answered at once, by an ACK with BECN.
  const bool becn_now = resp_.echo_becn && r.p.h.fecn;
  if (type() == IBV_QPT_RC && (r.p.h.ack_req || becn_now) && (r.send || r.write)) {
    ++stats_.acks_sent;
    queue_ack(r.p.h.psn);
  }
  return RespStep::Done;
}

}  // namespace rdmasim
