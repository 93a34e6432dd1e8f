// IBA's own loss recovery for RC (9.7.5.1.1, 9.7.6.1, 9.9): a gap at the
// responder is NAKed once and what follows it dropped; the requester goes
// back to the NAKed PSN, or on the local ACK timeout (9.7.6.1.3) to the
// oldest unacknowledged one, and sends everything from it again, each time
// spending one retry of retry_cnt. A READ or atomic response that went
// missing is asked for again the same way (9.7.6.1.4).
#pragma once

#include "fabrics/iba/transport/loss_recovery/loss_recovery.hpp"

namespace rdmasim {

class GoBackN : public QpLossRecovery {
 public:
  Time retry_timeout(const IbaQp& qp) const override;
  bool timed_out(IbaQp& qp) override;
  void sequence_nak(IbaQp& qp, const IbaParsed& p, const IrnExt* ext) override;
  void read_responses_missing(IbaQp& qp, verbs::SendWqe& w, uint32_t expected) override;
  void read_response_beyond(IbaQp& qp, verbs::SendWqe& w, const IbaParsed& p, const Payload& payload,
                            uint32_t expected) override;
  RespStep out_of_sequence(IbaQp& qp, const RespPacket& r) override;
  int32_t duplicate_read_span(uint32_t packets) const override;
};

}  // namespace rdmasim
