// IRN loss recovery on an RC queue pair (Mittal et al., "Revisiting Network
// Support for RDMA", SIGCOMM 2018), with loss_recovery: irn:
//  - requester: BDP-FC caps the unacknowledged packets; in loss recovery the
//    packets the SACKs show missing are sent again, one at a time, before
//    new ones; RTO_low / RTO_high replace the IBA local ACK timeout; a READ
//    response that went missing is asked for alone (section 5.3);
//  - responder: a packet beyond the expected PSN is placed at once (a
//    WRITE by the RETH IRN adds to every packet, a SEND into the receive
//    WQE its recv_WQE_SN names, at its offset) and answered by a NACK that
//    carries the expected PSN and its own (a SACK); completions stay in
//    order: when the expected PSN reaches placed packets, their messages
//    complete as if they had just arrived.
// The PSN bookkeeping of both ends is irn.hpp; the wire format of IRN's
// additions is fabrics/ip/wire/irn_option.hpp.
#pragma once

#include <deque>
#include <optional>
#include <vector>

#include "fabrics/iba/transport/loss_recovery/irn.hpp"
#include "fabrics/iba/transport/loss_recovery/loss_recovery.hpp"

namespace rdmasim {

class IrnRecovery final : public QpLossRecovery {
 public:
  explicit IrnRecovery(const IrnConfig& c);

  void connected(IbaQp& qp) override;

  // requester
  bool has_retransmit(const IbaQp& qp) const override;
  Packet retransmit(IbaQp& qp) override;
  bool may_send_new(const IbaQp& qp) const override;
  void message_started(verbs::SendWqe& w) override;
  void message_restarts(const verbs::SendWqe& w) override;
  bool ack_every_packet() const override { return true; }
  std::optional<IrnExt> request_extension(const verbs::SendWqe& w, uint64_t offset,
                                          bool write) const override;
  bool resends_in_place() const override { return true; }
  void went_back(uint32_t psn) override;

  // completer
  Time retry_timeout(const IbaQp& qp) const override;
  bool timed_out(IbaQp& qp) override;
  void forward_progress(IbaQp& qp) override;
  void sequence_nak(IbaQp& qp, const IbaParsed& p, const IrnExt* ext) override;
  void read_responses_missing(IbaQp& qp, verbs::SendWqe& w, uint32_t expected) override;
  void read_response_beyond(IbaQp& qp, verbs::SendWqe& w, const IbaParsed& p, const Payload& payload,
                            uint32_t expected) override;
  void read_response_behind_head(IbaQp& qp, const IbaParsed& p, const Payload& payload) override;
  void read_at_head(IbaQp& qp, verbs::SendWqe& w) override;
  void read_completed(uint32_t first_psn) override;
  void after_response(IbaQp& qp) override;

  // responder
  RespStep out_of_sequence(IbaQp& qp, const RespPacket& r) override;
  int32_t duplicate_read_span(uint32_t packets) const override { return static_cast<int32_t>(packets); }
  void receive_wqe_taken() override { ++recv_sn_; }
  void after_request(IbaQp& qp) override;

  // The sender's bookkeeping (for tests).
  const IrnSender& sender() const { return sender_; }

 private:
  Packet resend_packet(IbaQp& qp, uint32_t psn);
  Packet build_again(IbaQp& qp, size_t wqe, uint64_t offset, uint32_t psn, uint32_t read_bytes = 0);
  Packet ask_read_hole(IbaQp& qp);
  IrnReadRx* read(uint32_t first);
  IrnReadRx& read(uint32_t first, uint32_t packets);
  bool place(IbaQp& qp, const RespPacket& r);
  const verbs::RecvWqe* named_receive(const IbaQp& qp, const IrnExt& e) const;
  bool place_write(IbaQp& qp, const RespPacket& r, IrnSlot& s);
  bool complete_placed(IbaQp& qp, const IrnSlot& s);

  const IrnConfig& cfg_;
  IrnSender sender_;
  Time retry_spent_at_;  // the last forward progress or retry spent
  // Requester: recv_WQE_SN of the next message that takes a receive WQE.
  uint32_t next_recv_sn_ = 0;
  // Responder: receive WQEs taken by RC messages (recv_WQE_SN of the next),
  // and what was placed beyond the expected PSN, once a packet first is.
  uint32_t recv_sn_ = 0;
  std::optional<IrnReceiver> rx_;
  // The READs with responses placed out of order, by first PSN, and the
  // holes still to ask for.
  std::vector<IrnReadRx> reads_;
  std::deque<IrnReadAsk> read_asks_;
};

}  // namespace rdmasim
