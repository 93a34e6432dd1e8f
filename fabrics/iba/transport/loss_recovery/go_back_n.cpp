#include "fabrics/iba/transport/loss_recovery/go_back_n.hpp"

#include <limits>

#include "fabrics/iba/transport/qp_common.hpp"

namespace rdmasim {

using namespace iba_qp;

// The local ACK timeout: 4.096 us x 2^timeout (IBA 9.7.6.1.3).
Time GoBackN::retry_timeout(const IbaQp& qp) const { return ack_timeout(qp.attr_.timeout); }

bool GoBackN::timed_out(IbaQp& qp) {
  if (!qp.spend_retry()) return false;
  qp.go_back_to(qp.comp_.unacked_psn);
  return true;
}

// A sequence error NAK consumes retry_cnt, as in rxe.
void GoBackN::sequence_nak(IbaQp& qp, const IbaParsed& p, const IrnExt*) {
  qp.ack_through(p.h.psn);
  qp.retry_from(p.h.psn);
}

void GoBackN::read_responses_missing(IbaQp& qp, verbs::SendWqe&, uint32_t expected) {
  qp.retry_from(expected);
}

void GoBackN::read_response_beyond(IbaQp& qp, verbs::SendWqe&, const IbaParsed&, const Payload&,
                                   uint32_t expected) {
  qp.retry_from(expected);
}

// One sequence error NAK until the expected PSN comes (9.7.5.1.1).
RespStep GoBackN::out_of_sequence(IbaQp& qp, const RespPacket&) {
  if (!qp.resp_.nak_sent) {
    ++qp.stats_.seq_naks_sent;
    qp.queue_nak(qp.resp_.epsn, kNakSeqError);
  }
  return RespStep::Done;
}

// The requester went back to the duplicate's PSN and asks again for
// everything after it: all READ data queued from it on is replaced.
int32_t GoBackN::duplicate_read_span(uint32_t) const { return std::numeric_limits<int32_t>::max(); }

}  // namespace rdmasim
