// The one seam between an RC queue pair's protocol engines and the way it
// recovers lost packets. The requester, completer and responder
// (requester.cpp, completer.cpp, responder.cpp) call it at named points --
// what to send next, a packet sent, an ACK or NAK taken, the retry timer
// firing, a request arriving beyond the expected PSN -- and it decides.
//
//  - GoBackN (go_back_n.hpp): IBA's own (9.7.5.1.1, 9.7.6.1, 9.9): the
//    responder NAKs the first gap once and drops what follows it; the
//    requester goes back to the PSN the NAK or the local ACK timeout names
//    and sends everything from it again, spending one retry of retry_cnt.
//    It keeps nothing of its own: one instance serves every QP.
//  - IrnRecovery (irn_recovery.hpp): IRN's selective repeat with BDP-FC
//    (Mittal et al., SIGCOMM 2018), its state per QP.
//
// The points where IBA defines an answer are pure; the rest are what a
// strategy may add to IBA (retransmissions of its own, extension headers,
// packets placed out of order) and default to nothing. A strategy reads
// and drives the QP's roles directly (it is a friend of IbaQp), as one of
// the roles would. make_loss_recovery picks one for a QP.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "core/packet.hpp"
#include "core/units.hpp"
#include "fabrics/iba/transport/iba_qp.hpp"
#include "fabrics/ip/wire/irn_option.hpp"

namespace rdmasim {

class QpLossRecovery {
 public:
  using RespPacket = IbaQp::RespPacket;
  virtual ~QpLossRecovery() = default;

  // The QP reached RTR (the path MTU is known) or RTS (the send queue's
  // first PSN too).
  virtual void connected(IbaQp&) {}

  // ---- requester: what goes next
  // A packet is owed again and goes before anything new, and that packet
  // (an empty one when nothing needs it any more).
  virtual bool has_retransmit(const IbaQp&) const { return false; }
  virtual Packet retransmit(IbaQp&) { return Packet{}; }
  // Whether a new request packet may go now (beyond IBA's own limits).
  virtual bool may_send_new(const IbaQp&) const { return true; }

  // ---- requester: each message and packet
  // A message starts (it gets its PSNs), or will start again after going back.
  virtual void message_started(verbs::SendWqe&) {}
  virtual void message_restarts(const verbs::SendWqe&) {}
  // AckReq on every request packet, not only on each message's last (IBA 9.2.3).
  virtual bool ack_every_packet() const { return false; }
  // What a SEND or WRITE packet carries beyond IBA's headers.
  virtual std::optional<IrnExt> request_extension(const verbs::SendWqe&, uint64_t /*offset*/,
                                                  bool /*write*/) const {
    return std::nullopt;
  }
  // A packet sent again keeps its place among those in flight (it went
  // alone), rather than following a go-back.
  virtual bool resends_in_place() const { return false; }
  // The requester went back to `psn` (go-back-N, after an RNR wait, or for
  // a lost READ or atomic response): everything from it goes again in order.
  virtual void went_back(uint32_t /*psn*/) {}

  // ---- completer
  // The retry timer's period, and what its firing does; false when the QP
  // failed (retry_cnt spent).
  virtual Time retry_timeout(const IbaQp&) const = 0;
  virtual bool timed_out(IbaQp&) = 0;
  // An ACK or response acknowledged something new.
  virtual void forward_progress(IbaQp&) {}
  // A NAK for a PSN sequence error, with the extension header it came with.
  virtual void sequence_nak(IbaQp&, const IbaParsed&, const IrnExt* ext) = 0;
  // Responses of READ `w` from `expected` on are missing: an ACK or response
  // beyond the READ came (IBA 9.7.6.1.4).
  virtual void read_responses_missing(IbaQp&, verbs::SendWqe& w, uint32_t expected) = 0;
  // A response of READ `w`, at the head of the send queue, beyond the PSN it expects.
  virtual void read_response_beyond(IbaQp&, verbs::SendWqe& w, const IbaParsed&, const Payload&,
                                    uint32_t expected) = 0;
  // A READ response that is not for the READ at the head of the send queue.
  virtual void read_response_behind_head(IbaQp&, const IbaParsed&, const Payload&) {}
  // READ `w` is at the head of the send queue: responses it already holds count now.
  virtual void read_at_head(IbaQp&, verbs::SendWqe&) {}
  // The READ whose first PSN is `first_psn` completed.
  virtual void read_completed(uint32_t /*first_psn*/) {}
  // The completer has taken a response (ACK, NAK, READ response, atomic ACK).
  virtual void after_response(IbaQp&) {}

  // ---- responder
  // An RC request beyond the expected PSN (IBA 9.7.5.1.1).
  virtual RespStep out_of_sequence(IbaQp&, const RespPacket&) = 0;
  // How many PSNs of READ data already queued, from a duplicate READ's PSN
  // on, it replaces (IBA 9.7.5.1.3); the READ asked for `packets`.
  virtual int32_t duplicate_read_span(uint32_t packets) const = 0;
  // An RC message took a receive WQE (IBA 9.7.5.2.3).
  virtual void receive_wqe_taken() {}
  // The responder has taken a request.
  virtual void after_request(IbaQp&) {}
};

// IBA's go-back-N, shared by every QP.
QpLossRecovery& go_back_n();
// The strategy of a QP of `type` whose fabric runs IRN with `irn` (nullptr:
// it does not): a strategy of its own, or nullptr when it uses go_back_n().
std::unique_ptr<QpLossRecovery> make_loss_recovery(const IrnConfig* irn, ibv_qp_type type);

}  // namespace rdmasim
